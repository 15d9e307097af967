import type { Request } from 'express';
import type { AdminRole } from '@app/runtime';

/** Who is calling the admin API: a token's name or the signed-in user's email (or subject). */
export interface AdminIdentity {
  actor: string;
  role: AdminRole;
  via: 'token' | 'oidc';
  /** A session's CSRF token (single sign-on only). */
  csrf?: string;
}

/** The actor recorded for ADMIN_TOKEN, which has no name of its own. */
export const ADMIN_TOKEN_ACTOR = 'ADMIN_TOKEN';

export type AdminRequest = Request & { adminIdentity?: AdminIdentity };

/** Set by AdminAccessGuard; undefined on routes it does not guard. */
export function adminIdentityOf(request: Request): AdminIdentity | undefined {
  return (request as AdminRequest).adminIdentity;
}
