import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DidNotAnswerInTime, within } from '../async/within';
import type { RedisClient } from '../redis/redis-connection';
import { REDIS } from '../redis/redis.module';

const CHECK_TIMEOUT_MS = 2000;

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: { postgres: string; redis: string };
}

/**
 * What a failed check says: words of the service's own (CONTRACT §1). A driver's message names hosts,
 * ports and users (`connect ECONNREFUSED 10.0.0.7:6379`, `password authentication failed for user …`),
 * and /health/ready is often reachable by more people than the logs are.
 */
export const CHECK_TIMED_OUT = `down: no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
export const CHECK_FAILED = 'down: the check failed';

function outcomeOf(check: Promise<unknown>): Promise<string> {
  return within(check, CHECK_TIMEOUT_MS).then(
    () => 'ok',
    (error: unknown) => (error instanceof DidNotAnswerInTime ? CHECK_TIMED_OUT : CHECK_FAILED),
  );
}

/**
 * Whether PostgreSQL and Redis answer now: behind `/health/ready`, and what the worker waits for before
 * consuming. On a cluster or behind sentinels the command connection answers only once it has found the
 * slots or the current primary, so a PING through it is the whole check.
 */
@Injectable()
export class ReadinessService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async check(): Promise<ReadinessReport> {
    const [postgres, redis] = await Promise.all([outcomeOf(this.dataSource.query('SELECT 1')), outcomeOf(this.redis.ping())]);
    return { status: postgres === 'ok' && redis === 'ok' ? 'ok' : 'unavailable', checks: { postgres, redis } };
  }
}
