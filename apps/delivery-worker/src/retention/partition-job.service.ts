import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MIGRATION_LOCK_KEY, partitions } from '@app/persistence';
import { withAdvisoryLock } from './advisory-lock';
import { loggableErrorText } from '@app/runtime';

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
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.tick();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
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

  private tick(): void {
    this.running = this.runOnce()
      .then(
        () => undefined,
        (error: unknown) => this.logger.warn(`creating partitions ahead failed: ${loggableErrorText(error)}`),
      )
      .finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), RUN_INTERVAL_MS);
      });
  }
}
