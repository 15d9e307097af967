import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MIGRATION_LOCK_KEY, partitions } from '@app/persistence';
import { withAdvisoryLock } from './advisory-lock';
import { RepeatingRun } from '@app/runtime';

const RUN_INTERVAL_MS = 3_600_000;

/**
 * Creates the daily partitions of today and the next partitions.DEFAULT_PARTITIONS_AHEAD_DAYS days, at start and
 * then hourly (and the audit log's month partitions, this one and two ahead), so inserts always find their day's partition (the default partition catches them
 * otherwise, and the next creation moves them over). It takes the migrations' advisory lock: one worker
 * does it, never while `npm run migrate` is at work.
 */
@Injectable()
export class PartitionJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PartitionJob.name);
  private readonly loop = new RepeatingRun(() => this.runOnce(), { intervalMs: RUN_INTERVAL_MS, what: 'creating partitions ahead', logger: this.logger });

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.loop.stop();
  }

  /** Creates what is missing; null when another process holds the lock. */
  async runOnce(aheadDays = partitions.DEFAULT_PARTITIONS_AHEAD_DAYS, fromMs = Date.now()): Promise<string[] | null> {
    const created = await withAdvisoryLock(this.dataSource, MIGRATION_LOCK_KEY, this.logger, async (runner) => [
      ...(await partitions.ensureDailyPartitions(runner, aheadDays, fromMs)),
      ...(await partitions.ensureAuditPartitions(runner)),
    ]);
    if (created?.length) this.logger.log(`created partitions ${created.join(', ')}`);
    return created;
  }
}
