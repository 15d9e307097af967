import { Inject, Injectable } from '@nestjs/common';
import { ENVIRONMENT, type Environment, MinuteLimit, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import { rateLimited, serviceUnavailable } from './open-api-errors';

export interface RateLimitVerdict {
  /** Seconds until the account may call again (for `Retry-After`). */
  retryAfterSeconds: number;
}

/** Calls per account per minute (OPEN_API_RATE_LIMIT), shared by every config-api instance. */
@Injectable()
export class OpenApiRateLimiter {
  private readonly limit: MinuteLimit;

  constructor(@Inject(REDIS) redis: RedisClient, keys: RedisKeys, @Inject(ENVIRONMENT) environment: Environment) {
    this.limit = new MinuteLimit(redis, keys.rateLimitPrefix(), environment.openApi.rateLimitPerMinute);
  }

  /**
   * Spends one call of the account's budget. Throws the 429 Open API error (after `onLimited` has the
   * seconds to wait) when the budget is used up, and 503 when Redis cannot count.
   */
  async consume(accountId: number, onLimited: (verdict: RateLimitVerdict) => void): Promise<void> {
    let retryAfterSeconds: number | null;
    try {
      retryAfterSeconds = await this.limit.take(String(accountId));
    } catch {
      throw serviceUnavailable('the rate limiter is unavailable (Redis is not reachable); try again shortly');
    }
    if (retryAfterSeconds === null) return;
    onLimited({ retryAfterSeconds });
    throw rateLimited(`more than ${this.limit.points} calls a minute by this account; retry in ${retryAfterSeconds} s`);
  }
}
