import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { ApiError } from '@app/runtime';
import { PortalAccessService } from './portal-access.service';
import { PortalLimits } from './portal-limits';
import { accountActor, setAuditActor } from '../audit/audit-actor';

type PortalRequest = Request & { portalAccountId?: number };

/**
 * The one place the portal's scope is decided: a live session token binds its account to the request,
 * and every portal handler reads the account only through @PortalAccount() and passes it to queries
 * that filter on it. No token, an expired one, the admin token or anything else: 401. A live session
 * then spends one of its 120 calls a minute, and one of its account's 600 (429 past either).
 */
@Injectable()
export class PortalSessionGuard implements CanActivate {
  constructor(
    private readonly access: PortalAccessService,
    private readonly limits: PortalLimits,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<PortalRequest>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new ApiError(401, 'unauthorized', 'missing portal session token');
    const accountId = await this.access.accountOfToken(match[1]);
    if (accountId === null) throw new ApiError(401, 'unauthorized', 'the portal session is expired or unknown; open a new portal link');
    await this.limits.spendCall(createHash('sha256').update(match[1]).digest('base64url'), accountId, context.switchToHttp().getResponse<Response>());
    request.portalAccountId = accountId;
    setAuditActor(request, accountActor(accountId, 'portal'));
    return true;
  }
}

/** The account of the request's portal session; only PortalSessionGuard sets it. */
export const PortalAccount = createParamDecorator((_data: unknown, context: ExecutionContext): number => {
  const accountId = context.switchToHttp().getRequest<PortalRequest>().portalAccountId;
  // A handler without the guard is a programming error: refuse rather than serve some default account.
  if (accountId === undefined) throw new ApiError(401, 'unauthorized', 'missing portal session token');
  return accountId;
});
