import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { Reflector } from '@nestjs/core';
import { ApiError, ENVIRONMENT, type Environment, roleCovers } from '@app/runtime';
import { setAuditActor } from '../../audit/audit-actor';
import { AUDIT_METADATA } from '../../audit/audit.decorator';
import { AuditRecorder } from '../../audit/audit-recorder.service';
import type { AdminIdentity, AdminRequest } from './admin-identity';
import { AdminSessions } from './admin-sessions';
import { AdminTokens } from './admin-tokens';
import { cookieOf, SESSION_COOKIE } from './session-cookies';
import { type AdminPermission, PERMISSION_METADATA, PERMISSION_ROLE } from './permission.decorator';

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameText(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}

/**
 * The one door of the admin API (CONTRACT §15): who is calling (a bearer token, ADMIN_TOKEN or a named
 * one, or the console's single sign-on session), then whether their role covers the permission the route declares with @Permission. A route that
 * declares none is refused: forgetting it must not open a route to every role.
 */
@Injectable()
export class AdminAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: AdminTokens,
    private readonly audit: AuditRecorder,
    private readonly sessions: AdminSessions,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const permission = this.reflector.get<AdminPermission | undefined>(PERMISSION_METADATA, context.getHandler());
    const identity = await this.identify(request);
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

  /**
   * A bearer token wins over a cookie. A session cookie's writes must carry its CSRF token in
   * `x-csrf-token`: SameSite=Lax already keeps other sites' forms away, this keeps away the rest.
   */
  private async identify(request: AdminRequest): Promise<AdminIdentity> {
    const sessionToken = request.headers.authorization === undefined ? cookieOf(request, SESSION_COOKIE) : null;
    if (sessionToken !== null) {
      const session = await this.sessions.find(sessionToken);
      if (session === null) throw new ApiError(401, 'unauthorized', 'the console session has ended; sign in again');
      if (!SAFE_METHODS.has(request.method) && !sameText(request.headers['x-csrf-token'], session.csrf)) {
        throw new ApiError(403, 'forbidden', 'a write made with the console session must carry its x-csrf-token (from GET /admin/v1/session)');
      }
      return { actor: session.actor, role: session.role, via: 'oidc', csrf: session.csrf };
    }
    if (!this.tokens.configured && this.environment.identity.oidc === null) throw new ApiError(401, 'unauthorized', 'ADMIN_TOKEN is not configured on this server');
    const presented = bearerOf(request.headers.authorization);
    if (presented === null) throw new ApiError(401, 'unauthorized', 'missing bearer token');
    const identity = this.tokens.identify(presented);
    if (identity === null) throw new ApiError(401, 'unauthorized', 'invalid bearer token');
    return identity;
  }
}
