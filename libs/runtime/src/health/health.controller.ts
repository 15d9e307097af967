import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import { within } from '../async/within';
import { REDIS } from '../redis/redis.module';

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: { postgres: string; redis: string };
}

@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<ReadinessReport> {
    const report = await this.check();
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }

  async check(): Promise<ReadinessReport> {
    const [postgres, redis] = await Promise.all([
      within(this.dataSource.query('SELECT 1'), 2000).then(
        () => 'ok',
        (error: Error) => `down: ${error.message}`,
      ),
      within(this.redis.ping(), 2000).then(
        () => 'ok',
        (error: Error) => `down: ${error.message}`,
      ),
    ]);
    return { status: postgres === 'ok' && redis === 'ok' ? 'ok' : 'unavailable', checks: { postgres, redis } };
  }
}
