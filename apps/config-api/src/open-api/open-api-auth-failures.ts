import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ENVIRONMENT, type Environment, OpenApiError, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
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
 * shares them. After 20 in a minute (a window opened by the first failure), every further call for that
 * email from that address is refused with 429 / code 2000 before any database lookup, until the window
 * ends; other emails and other addresses are not affected. The email is hashed into the key, so Redis
 * holds no address book.
 */
@Injectable()
export class OpenApiAuthFailures {
  private readonly limiter: RateLimiterRedis;

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(ENVIRONMENT) environment: Environment) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${new RedisKeys(environment.redis.prefix).rateLimitPrefix()}:auth-failures`,
      points: AUTH_FAILURES_PER_MINUTE,
      duration: 60,
      rejectIfRedisNotReady: true,
    });
  }

  /** The counter's key for this request: the email as sent (lower-cased), and the address of the connection. */
  keyOf(request: Request): string {
    const email = typeof request.query.email === 'string' ? request.query.email.toLowerCase() : '';
    const address = request.socket.remoteAddress ?? '';
    return createHash('sha256').update(`${email}\n${address}`).digest('base64url');
  }

  /** Throws the 429 when this key has used up its failures, with the seconds left for `Retry-After`. */
  async refuseWhenBlocked(key: string, onBlocked: (retryAfterSeconds: number) => void): Promise<void> {
    let consumed: { consumedPoints: number; msBeforeNext: number } | null;
    try {
      consumed = await this.limiter.get(key);
    } catch {
      // Redis is down: the nonce claim, which needs it too, refuses every signed call with 503 anyway.
      return;
    }
    if (!consumed || consumed.consumedPoints < AUTH_FAILURES_PER_MINUTE) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(consumed.msBeforeNext / 1000));
    onBlocked(retryAfterSeconds);
    throw rateLimited(`more than ${AUTH_FAILURES_PER_MINUTE} failed authentications a minute for this email from this address; retry in ${retryAfterSeconds} s`);
  }

  /** Counts one failure; a Redis error here is not the caller's problem, whose answer (the failure) stands. */
  async count(key: string): Promise<void> {
    await this.limiter.penalty(key, 1).catch(() => undefined);
  }
}
