import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { within } from '../async/within';
import type { RedisClient } from '../redis/redis-connection';
import { REDIS } from '../redis/redis.module';

const CHECK_TIMEOUT_MS = 2000;

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: { postgres: string; redis: string };
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
    const [postgres, redis] = await Promise.all([
      within(this.dataSource.query('SELECT 1'), CHECK_TIMEOUT_MS, 'PostgreSQL').then(
        () => 'ok',
        (error: Error) => `down: ${error.message}`,
      ),
      within(this.redis.ping(), CHECK_TIMEOUT_MS, 'Redis').then(
        () => 'ok',
        (error: Error) => `down: ${error.message}`,
      ),
    ]);
    return { status: postgres === 'ok' && redis === 'ok' ? 'ok' : 'unavailable', checks: { postgres, redis } };
  }
}
