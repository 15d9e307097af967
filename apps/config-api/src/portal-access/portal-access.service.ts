import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError, ENVIRONMENT, type Environment } from '@app/runtime';
import { SESSION_TTL_MS } from './portal-ttl';

export interface PortalLink {
  url: string;
  expires_at: string;
}

export interface PortalSession {
  token: string;
  account_id: number;
  expires_at: string;
}

/** 32 random bytes, base64url: unguessable, and safe in a URL fragment and a header. */
function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

function digestOf(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Common table expressions ending every portal session and link code of the account `$<n>` names: the
 * statement that replaces the account's Open API token carries them, so the token and whatever was opened
 * with the old one end in one commit (CONTRACT §10).
 */
export function endPortalAccessCtes(accountParameter: string): string {
  return `ended_sessions AS (DELETE FROM portal_sessions WHERE account_id = ${accountParameter}),
          ended_codes AS (DELETE FROM portal_link_codes WHERE account_id = ${accountParameter})`;
}

/** Codes and tokens are 43 base64url characters; anything else is not worth a query. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Portal links and sessions (CONTRACT §10). A link carries a one-time code in its fragment; the portal
 * page trades it for a session token. Only digests are stored, and a digest lookup is an exact index
 * probe, so nothing about a secret can be learnt from timing.
 */
@Injectable()
export class PortalAccessService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** A link to the account's portal, valid once for `ttlMs`; 404 when the account does not exist. */
  async createLink(accountId: number, ttlMs: number): Promise<PortalLink> {
    const code = newSecret();
    // The account's dead codes and sessions go as it gets a new link: the tables stay the size of what is live.
    const rows = await this.dataSource.query<{ expires_at: Date }[]>(
      `WITH dead_codes AS (
         DELETE FROM portal_link_codes WHERE account_id = $2 AND (expires_at <= now() OR used_at IS NOT NULL)
       ), dead_sessions AS (
         DELETE FROM portal_sessions WHERE account_id = $2 AND expires_at <= now()
       )
       INSERT INTO portal_link_codes (code_digest, account_id, expires_at)
       SELECT $1, id, now() + make_interval(secs => $3::float8 / 1000) FROM accounts WHERE id = $2 AND deleted_at IS NULL
       RETURNING expires_at`,
      [digestOf(code), accountId, ttlMs],
    );
    if (rows.length === 0) throw new ApiError(404, 'not_found', `account ${accountId} does not exist`);
    return { url: `${this.environment.publicUrl}/portal#${code}`, expires_at: rows[0].expires_at.toISOString() };
  }

  /** Uses the code up (one statement, so two tabs racing with one code get one session) and opens a session. */
  async openSession(code: unknown): Promise<PortalSession> {
    if (typeof code !== 'string' || !SECRET_SHAPE.test(code)) throw this.refusedCode();
    const token = newSecret();
    const rows = await this.dataSource.query<{ account_id: number; expires_at: Date }[]>(
      `WITH used AS (
         UPDATE portal_link_codes SET used_at = now()
          WHERE code_digest = $1 AND used_at IS NULL AND expires_at > now()
          RETURNING account_id
       )
       INSERT INTO portal_sessions (token_digest, account_id, expires_at)
       SELECT $2, account_id, now() + make_interval(secs => $3::float8 / 1000) FROM used
       RETURNING account_id, expires_at`,
      [digestOf(code), digestOf(token), SESSION_TTL_MS],
    );
    if (rows.length === 0) throw this.refusedCode();
    return { token, account_id: rows[0].account_id, expires_at: rows[0].expires_at.toISOString() };
  }

  /** The account a live session token belongs to, or null. */
  async accountOfToken(token: string): Promise<number | null> {
    if (!SECRET_SHAPE.test(token)) return null;
    const rows = await this.dataSource.query<{ account_id: number }[]>(
      'SELECT account_id FROM portal_sessions WHERE token_digest = $1 AND expires_at > now()',
      [digestOf(token)],
    );
    return rows[0]?.account_id ?? null;
  }

  /** One answer for used, expired and unknown codes: which one it was is nobody's business. */
  private refusedCode(): ApiError {
    return new ApiError(401, 'unauthorized', 'this portal link is used, expired or unknown; ask for a new one');
  }
}
