import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError, ENVIRONMENT, type Environment } from '@app/runtime';
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

/** Live portal sessions per account at most; opening one more ends the oldest (CONTRACT §10). */
export const PORTAL_SESSIONS_PER_ACCOUNT = 10;

/**
 * Replaces the account's Open API token (`sealedToken`, already sealed) and ends every portal session and
 * link code of the account at once (CONTRACT §10), in one transaction: the account's row first (its lock
 * orders the rotation against sessions being opened, which lock the row before their code), then the rows.
 * Codes and sessions count only under the portal generation they were opened in, and the rotation moves
 * it, so a link or session opened while the rotation runs (an insert its delete cannot see) is dead too
 * once it commits. False when the account does not exist.
 */
export async function rotateTokenEndingPortalAccess(manager: EntityManager, accountId: number, sealedToken: string): Promise<boolean> {
  const [rows] = await manager.query<[unknown[], number]>(
    'UPDATE accounts SET open_api_token = $2, portal_generation = portal_generation + 1 WHERE id = $1 AND deleted_at IS NULL RETURNING id',
    [accountId, sealedToken],
  );
  if (rows.length === 0) return false;
  await manager.query('DELETE FROM portal_link_codes WHERE account_id = $1', [accountId]);
  await manager.query('DELETE FROM portal_sessions WHERE account_id = $1', [accountId]);
  return true;
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
       INSERT INTO portal_link_codes (code_digest, account_id, expires_at, generation)
       SELECT $1, id, now() + make_interval(secs => $3::float8 / 1000), portal_generation FROM accounts WHERE id = $2 AND deleted_at IS NULL
       RETURNING expires_at`,
      [digestOf(code), accountId, ttlMs],
    );
    if (rows.length === 0) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return { url: `${this.environment.publicUrl}/portal#${code}`, expires_at: rows[0].expires_at.toISOString() };
  }

  /**
   * Uses the code up and opens a session, in one transaction: the code is taken with a row lock (two tabs
   * racing with one code get one session), the account's row is locked so sessions of one account open one
   * at a time, and past PORTAL_SESSIONS_PER_ACCOUNT live ones the oldest end (401 after). A code of an
   * earlier portal generation (rotate-token since) opens nothing.
   */
  async openSession(code: unknown): Promise<PortalSession> {
    if (typeof code !== 'string' || !SECRET_SHAPE.test(code)) throw this.refusedCode();
    const token = newSecret();
    const session = await this.dataSource.transaction(async (manager) => {
      // The account's row first, as a rotation takes it (same lock order: no deadlock): this orders the open
      // against a rotation (which moves the generation) and other opens of the account.
      const [account] = await manager.query<{ id: number }[]>(
        `SELECT a.id FROM accounts a JOIN portal_link_codes c ON c.account_id = a.id
          WHERE c.code_digest = $1 AND a.deleted_at IS NULL
            FOR NO KEY UPDATE OF a`,
        [digestOf(code)],
      );
      if (!account) return null;
      // TypeORM answers an UPDATE with [rows, count].
      const [[used]] = await manager.query<[{ account_id: number; generation: number }[], number]>(
        `UPDATE portal_link_codes c SET used_at = now()
           FROM accounts a
          WHERE c.code_digest = $1 AND c.used_at IS NULL AND c.expires_at > now()
            AND a.id = c.account_id AND a.portal_generation = c.generation
          RETURNING c.account_id, c.generation`,
        [digestOf(code)],
      );
      if (!used) return null;
      const [opened] = await manager.query<{ expires_at: Date }[]>(
        // clock_timestamp(), not the transaction's start: sessions age in the order they took the account's lock.
        `INSERT INTO portal_sessions (token_digest, account_id, expires_at, generation, created_at)
         VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), $4, clock_timestamp())
         RETURNING expires_at`,
        [digestOf(token), used.account_id, SESSION_TTL_MS, used.generation],
      );
      await manager.query(
        `DELETE FROM portal_sessions WHERE account_id = $1 AND token_digest IN (
           SELECT token_digest FROM portal_sessions
            WHERE account_id = $1 AND expires_at > now() AND generation = $2
            ORDER BY created_at DESC, token_digest OFFSET $3)`,
        [used.account_id, used.generation, PORTAL_SESSIONS_PER_ACCOUNT],
      );
      return { account_id: used.account_id, expires_at: opened.expires_at };
    });
    if (!session) throw this.refusedCode();
    return { token, account_id: session.account_id, expires_at: session.expires_at.toISOString() };
  }

  /** The account a live session token belongs to, or null (expired, ended, of an earlier portal generation, or of a deleted account). */
  async accountOfToken(token: string): Promise<number | null> {
    if (!SECRET_SHAPE.test(token)) return null;
    const rows = await this.dataSource.query<{ account_id: number }[]>(
      `SELECT s.account_id FROM portal_sessions s JOIN accounts a ON a.id = s.account_id
        WHERE s.token_digest = $1 AND s.expires_at > now() AND a.portal_generation = s.generation AND a.deleted_at IS NULL`,
      [digestOf(token)],
    );
    return rows[0]?.account_id ?? null;
  }

  /** One answer for used, expired and unknown codes: which one it was is nobody's business. */
  private refusedCode(): DomainError {
    return new DomainError('unauthorized', 'this portal link is used, expired or unknown; ask for a new one');
  }
}
