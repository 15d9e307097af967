import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import { clientAddress, ENVIRONMENT, type Environment, MinuteLimit, OpenApiError, REDIS, type RedisClient, RedisKeys, type TrustProxy } from '@app/runtime';
import { OpenApiCode, rateLimited } from './open-api-errors';

/** Failed authentications allowed for one email from one client address in a minute (CONTRACT §2). */
export const AUTH_FAILURES_PER_MINUTE = 20;

/** The codes that count as a failed authentication. */
const AUTH_FAILURE_CODES: ReadonlySet<number> = new Set([
  OpenApiCode.authFailed,
  OpenApiCode.badTimestamp,
  OpenApiCode.staleTimestamp,
  OpenApiCode.replayedNonce,
  OpenApiCode.missingNonce,
]);

export function isAuthFailure(error: unknown): boolean {
  return error instanceof OpenApiError && AUTH_FAILURE_CODES.has(error.code);
}

/**
 * Failed authentications by (email, client address), counted in Redis so every config-api instance
 * shares them. Only failures count, and only failing calls are refused: past 20 in a minute (a window
 * opened by the first failure) a failing call for that email from that address answers 429 / code 2000
 * instead of its own error until the window ends, while a correctly signed call still passes, so nobody
 * who merely knows an email can lock its owner out. The client address is the socket's, or the one
 * TRUST_PROXY's proxies forwarded. The email is hashed into the key, so Redis holds no address book.
 */
@Injectable()
export class OpenApiAuthFailures {
  private readonly limit: MinuteLimit;
  private readonly trustProxy: TrustProxy | null;

  constructor(@Inject(REDIS) redis: RedisClient, keys: RedisKeys, @Inject(ENVIRONMENT) environment: Environment) {
    this.trustProxy = environment.trustProxy;
    this.limit = new MinuteLimit(redis, keys.authFailuresLimit(), AUTH_FAILURES_PER_MINUTE);
  }

  /** The counter's key for this request: the email as sent (lower-cased), and the client's address. */
  keyOf(request: Request): string {
    const email = typeof request.query.email === 'string' ? request.query.email.toLowerCase() : '';
    return createHash('sha256').update(`${email}\n${clientAddress(request, this.trustProxy)}`).digest('base64url');
  }

  /**
   * Counts one failure. Past the limit, throws the 429 (with the seconds left for `Retry-After`) that
   * replaces the failure's own answer; otherwise returns and the failure's answer stands. A Redis error
   * here is not the caller's problem: the failure's answer stands too.
   */
  async countOrRefuse(key: string, onBlocked: (retryAfterSeconds: number) => void): Promise<void> {
    const retryAfterSeconds = await this.limit.take(key).catch(() => null);
    if (retryAfterSeconds !== null) {
      onBlocked(retryAfterSeconds);
      throw rateLimited(`more than ${AUTH_FAILURES_PER_MINUTE} failed authentications a minute for this email from this address; retry in ${retryAfterSeconds} s`);
    }
  }
}
