import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { type AdminRole, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import { SESSION_TTL_SECONDS } from './session-cookies';

export interface StoredSession {
  actor: string;
  role: AdminRole;
  /** Sent back as `x-csrf-token` with every write made with the cookie. */
  csrf: string;
}

function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * Console sessions made by single sign-on, kept in Redis: every config-api process sees them, they
 * expire on their own after 8 hours (no sweeping job), and sign-out deletes one at once. Only a digest
 * of the cookie is a key, so a copy of Redis cannot be replayed as cookies.
 */
@Injectable()
export class AdminSessions {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** Stores the session and answers the cookie's value. */
  async open(session: Omit<StoredSession, 'csrf'>): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const stored: StoredSession = { ...session, csrf: randomBytes(24).toString('base64url') };
    await this.redis.set(this.keys.adminSession(digestOf(token)), JSON.stringify(stored), 'EX', SESSION_TTL_SECONDS);
    return token;
  }

  async find(token: string): Promise<StoredSession | null> {
    const text = await this.redis.get(this.keys.adminSession(digestOf(token)));
    return text === null ? null : (JSON.parse(text) as StoredSession);
  }

  /** Ends the session; answers what it was, or null when there was none. */
  async close(token: string): Promise<StoredSession | null> {
    const key = this.keys.adminSession(digestOf(token));
    const text = await this.redis.get(key);
    await this.redis.del(key);
    return text === null ? null : (JSON.parse(text) as StoredSession);
  }
}
