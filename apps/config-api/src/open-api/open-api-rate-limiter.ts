import { Inject, Injectable } from '@nestjs/common';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ENVIRONMENT, type Environment, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import { rateLimited, serviceUnavailable } from './open-api-errors';

export interface RateLimitVerdict {
  /** Seconds until the account may call again (for `Retry-After`). */
  retryAfterSeconds: number;
}

/**
 * Calls per account per minute, counted in Redis so every config-api instance shares one budget.
 * A fixed one-minute window (rate-limiter-flexible's atomic INCR + EXPIRE script). The script touches
 * one key per account, so it runs unchanged on a Redis Cluster (the client is then an ioredis Cluster).
 */
@Injectable()
export class OpenApiRateLimiter {
  private readonly limiter: RateLimiterRedis;
  readonly limitPerMinute: number;

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(ENVIRONMENT) environment: Environment) {
    this.limitPerMinute = environment.openApi.rateLimitPerMinute;
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: new RedisKeys(environment.redis.prefix).rateLimitPrefix(),
      points: this.limitPerMinute,
      duration: 60,
      // Without this the limiter would wait on a disconnected client; refusing at once is the point.
      rejectIfRedisNotReady: true,
    });
  }

  /**
   * Spends one call of the account's budget. Throws the 429 Open API error (with the seconds to wait
   * in `retryAfterSeconds` on the error) when the budget is used up, and 503 when Redis cannot count.
   */
  async consume(accountId: number, onLimited: (verdict: RateLimitVerdict) => void): Promise<void> {
    try {
      await this.limiter.consume(String(accountId));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        const retryAfterSeconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        onLimited({ retryAfterSeconds });
        throw rateLimited(`more than ${this.limitPerMinute} calls a minute by this account; retry in ${retryAfterSeconds} s`);
      }
      throw serviceUnavailable('the rate limiter is unavailable (Redis is not reachable); try again shortly');
    }
  }
}
