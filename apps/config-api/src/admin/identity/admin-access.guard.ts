import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, roleCovers } from '@app/runtime';
import { setAuditActor } from '../../audit/audit-actor';
import { AUDIT_METADATA } from '../../audit/audit.decorator';
import { AuditRecorder } from '../../audit/audit-recorder.service';
import type { AdminIdentity, AdminRequest } from './admin-identity';
import { AdminTokens } from './admin-tokens';
import { type AdminPermission, PERMISSION_METADATA, PERMISSION_ROLE } from './permission.decorator';

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * The one door of the admin API (CONTRACT §15): who is calling (a bearer token, ADMIN_TOKEN or a named
 * one), then whether their role covers the permission the route declares with @Permission. A route that
 * declares none is refused: forgetting it must not open a route to every role.
 */
@Injectable()
export class AdminAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: AdminTokens,
    private readonly audit: AuditRecorder,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const permission = this.reflector.get<AdminPermission | undefined>(PERMISSION_METADATA, context.getHandler());
    const identity = this.identify(request);
    request.adminIdentity = identity;
    setAuditActor(request, identity);
    if (permission === undefined) throw new ApiError(403, 'forbidden', 'this route declares no permission, so no role may call it');
    const needed = PERMISSION_ROLE[permission];
    if (!roleCovers(identity.role, needed)) {
      // A write refused for its role is worth knowing about: recorded like the writes that pass.
      const action = this.reflector.get<string | undefined>(AUDIT_METADATA, context.getHandler());
      if (action) {
        const accountId = /^\/admin\/v1\/accounts\/(\d{1,10})(\/|$)/.exec(request.path)?.[1];
        await this.audit.record(request, identity, { action, status: 403, accountId: accountId ? Number(accountId) : null });
      }
      throw new ApiError(403, 'forbidden', `the role ${identity.role} (${identity.actor}) may not do this: it needs the role ${needed}`);
    }
    return true;
  }

  private identify(request: AdminRequest): AdminIdentity {
    if (!this.tokens.configured) throw new ApiError(401, 'unauthorized', 'ADMIN_TOKEN is not configured on this server');
    const presented = bearerOf(request.headers.authorization);
    if (presented === null) throw new ApiError(401, 'unauthorized', 'missing bearer token');
    const identity = this.tokens.identify(presented);
    if (identity === null) throw new ApiError(401, 'unauthorized', 'invalid bearer token');
    return identity;
  }
}
