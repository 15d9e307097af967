import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../redis/redis-connection';

/** Redis could not count: the caller decides whether that refuses the call or lets it through. */
export class LimitUnavailableError extends Error {
  constructor() {
    super('the rate limiter is unavailable (Redis is not reachable)');
    this.name = 'LimitUnavailableError';
  }
}

/**
 * At most `points` calls a minute per key, counted in Redis so every process shares one budget: a fixed
 * one-minute window opened by the first call (rate-limiter-flexible's atomic INCR + PEXPIRE script on one
 * key, so it runs unchanged on a Redis Cluster). A key holds one small counter that expires with its
 * window, and a refused call only increments it: what a limit keeps is bounded by the keys live in one
 * minute, whatever the number of calls.
 */
export class MinuteLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: RedisClient,
    keyPrefix: string,
    readonly points: number,
  ) {
    // Without rejectIfRedisNotReady the limiter would wait on a disconnected client; answering at once is the point.
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: 60, rejectIfRedisNotReady: true });
  }

  /**
   * Spends one call of the key's budget: null when the call may go on, else the whole seconds to wait
   * (for `Retry-After`). Throws LimitUnavailableError when Redis cannot count.
   */
  async take(key: string): Promise<number | null> {
    try {
      await this.limiter.consume(key);
      return null;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new LimitUnavailableError();
    }
  }
}
