import type { Request } from 'express';
import type { AdminRole } from '@app/runtime';

/**
 * Who the audit log names for a request (CONTRACT §15): the guard that let the request in sets it
 * (the admin guard, the Open API's, the portal's), so this folder depends on none of them.
 */
export interface AuditActor {
  /** A token's name, the signed-in user's email (or subject), or `account:<id>`. */
  actor: string;
  role: AdminRole | null;
  via: 'token' | 'oidc' | 'open_api' | 'portal';
  /** The API user's account, for Open API and portal calls. */
  accountId?: number;
}

type AuditedRequest = Request & { auditActor?: AuditActor };

export function setAuditActor(request: Request, actor: AuditActor): void {
  (request as AuditedRequest).auditActor = actor;
}

export function auditActorOf(request: Request): AuditActor | undefined {
  return (request as AuditedRequest).auditActor;
}

/** The actor of an API user's call. */
export function accountActor(accountId: number, via: 'open_api' | 'portal'): AuditActor {
  return { actor: `account:${accountId}`, role: null, via, accountId };
}
