import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { partitions } from '@app/persistence';
import { counter, ENVIRONMENT, type Environment, RepeatingRun } from '@app/runtime';
import { type BatchOutcome, DELETE_ROLLUPS_SQL, deleteBotCallsSql, deleteEventsSql, existingTables } from './residual-trim';
import { withAdvisoryLock } from './advisory-lock';

const FIRST_RUN_DELAY_MS = 60_000;
const RUN_INTERVAL_MS = 3_600_000;
export const RETENTION_BATCH_SIZE = 5_000;
/** Between batches, so foreground writes and autovacuum get the disk and row locks back. */
const BATCH_PAUSE_MS = 200;
/** Any fixed number works; it only has to differ from the other advisory locks (migrations use 7_263_511_004). */
export const RETENTION_LOCK_KEY = 7_263_511_005;

export const retentionDeletedRows = counter('retention_deleted_rows_total', 'Rows deleted one by one by the retention job, by table', ['table']);
export const retentionDroppedPartitions = counter('retention_dropped_partitions_total', 'Daily partitions dropped by the retention job', []);
export const retentionKeptPending = counter(
  'retention_kept_pending_events_total',
  'Pending events moved out of an expired partition into the default one instead of being dropped',
  [],
);

export interface RetentionResult {
  /** Daily partitions dropped (events, their attempts and bot calls), oldest first, then the audit log's months past AUDIT_RETENTION_DAYS. */
  droppedPartitions: string[];
  /** Pending events of dropped days, moved to events_default with their attempts. */
  keptPending: number;
  /** Rows deleted one by one from the default and legacy partitions. */
  events: number;
  botCalls: number;
  /** Event ids forgotten: those of the dropped days' events and of the rows deleted one by one. */
  eventKeys: number;
  /** Stats-series rollup rows whose bucket lies before the window. */
  rollups: number;
}

interface Trimmed {
  deleted: number;
  forgotten: number;
}

const NOTHING: RetentionResult = { droppedPartitions: [], keptPending: 0, events: 0, botCalls: 0, eventKeys: 0, rollups: 0 };

/**
 * Keeps events (with their attempts), bot calls and event ids at a bounded size: every hour one worker
 * forgets the ids of the events of the daily partitions that lie wholly before now − RETENTION_DAYS
 * (in batches, found by id) and drops those days (a catalog change, however big the day), moving any
 * event still owed a delivery into the default partition first; then deletes the few expired final rows
 * of the default and legacy partitions in batches with their ids, drops the legacy partitions once
 * empty, deletes the stats rollups before the
 * window and folds the event tallies of past hours (under the same lock, so a fold never races the
 * drop of a day's tallies). Workers that find the advisory lock taken skip the round: one is enough,
 * and several would only contend on the same tables.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionService.name);
  private readonly loop = new RepeatingRun(() => this.runOnce(), { intervalMs: RUN_INTERVAL_MS, what: 'retention', logger: this.logger });
  private pause: { timer: NodeJS.Timeout; resolve: () => void } | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start(FIRST_RUN_DELAY_MS);
  }

  /** Runs before the DataSource closes: a round in progress stops after its current step and lets go of the lock. */
  async beforeApplicationShutdown(): Promise<void> {
    const stopped = this.loop.stop();
    if (this.pause) {
      clearTimeout(this.pause.timer);
      this.pause.resolve();
      this.pause = null;
    }
    await stopped;
  }

  /** One round; answers nothing done when another worker holds the lock. */
  async runOnce(): Promise<RetentionResult> {
    const cutoffMs = Date.now() - this.environment.retention.days * partitions.DAY_MS;
    const cutoff = new Date(cutoffMs);
    const result = await withAdvisoryLock(this.dataSource, RETENTION_LOCK_KEY, this.logger, async (runner) => {
      let eventKeys = 0;
      for (const day of await partitions.expiredEventDays(runner, cutoffMs)) {
        eventKeys += (await this.deleteInBatches(runner, partitions.forgetDayKeysSql(day.name), day.to!.toString(), '0', 'event_keys')).deleted;
      }
      const dropped = await partitions.dropExpiredPartitions(runner, cutoffMs);
      const keptPending = dropped.reduce((sum, day) => sum + day.keptPending, 0);
      retentionDroppedPartitions.inc(dropped.length);
      retentionKeptPending.inc(keptPending);
      const { deleted: events, forgotten } = await this.trimResidualEvents(runner, cutoff);
      eventKeys += forgotten;
      const botCalls = await this.trimResidualBotCalls(runner, cutoff);
      await this.dropEmptyLegacy(runner);
      const { deleted: rollups } = await this.deleteInBatches(runner, DELETE_ROLLUPS_SQL, cutoff, '-infinity', 'delivery_rollups');
      // The audit log has its own window; its months leave whole, as its trigger refuses row deletes.
      const auditMonths = await partitions.dropExpiredAuditPartitions(runner, Date.now() - this.environment.identity.auditRetentionDays * partitions.DAY_MS);
      retentionDroppedPartitions.inc(auditMonths.length);
      return { droppedPartitions: [...dropped.map((day) => day.partition), ...auditMonths], keptPending, events, botCalls, eventKeys, rollups };
    });
    if (!result) {
      this.logger.debug('retention skipped: another worker is running it');
      return NOTHING;
    }
    this.logger.log(
      `retention dropped ${result.droppedPartitions.length} partition(s) before ${cutoff.toISOString()} (${result.keptPending} pending event(s) kept), ` +
        `deleted ${result.events} event(s), ${result.botCalls} bot call(s), ${result.eventKeys} event id(s) and ${result.rollups} rollup row(s)`,
    );
    return result;
  }

  private async trimResidualEvents(runner: QueryRunner, cutoff: Date): Promise<Trimmed> {
    const present = await existingTables(runner, ['events_default', 'events_legacy', 'delivery_attempts_legacy']);
    const total = { deleted: 0, forgotten: 0 };
    for (const kind of ['default', 'legacy']) {
      if (!present.has(`events_${kind}`)) continue;
      // Until a legacy attempts partition exists, attempts of legacy events live in the default one.
      const attempts = kind === 'legacy' && present.has('delivery_attempts_legacy') ? 'delivery_attempts_legacy' : 'delivery_attempts_default';
      const trimmed = await this.deleteInBatches(runner, deleteEventsSql(`events_${kind}`, attempts), cutoff, '-infinity', 'events');
      total.deleted += trimmed.deleted;
      total.forgotten += trimmed.forgotten;
    }
    return total;
  }

  private async trimResidualBotCalls(runner: QueryRunner, cutoff: Date): Promise<number> {
    const present = await existingTables(runner, ['bot_calls_default', 'bot_calls_legacy']);
    let total = 0;
    for (const partition of present) total += (await this.deleteInBatches(runner, deleteBotCallsSql(partition), cutoff, '-infinity', 'bot_calls')).deleted;
    return total;
  }

  /** The legacy partitions (the tables from before partitioning) go once retention has emptied them. */
  private async dropEmptyLegacy(runner: QueryRunner): Promise<void> {
    const present = await existingTables(runner, ['events_legacy', 'delivery_attempts_legacy', 'bot_calls_legacy']);
    const isEmpty = async (table: string) =>
      ((await runner.query(`SELECT NOT EXISTS (SELECT 1 FROM ${table}) AS empty`)) as { empty: boolean }[])[0].empty;
    if (present.has('events_legacy') && (await isEmpty('events_legacy'))) {
      if (present.has('delivery_attempts_legacy') && (await isEmpty('delivery_attempts_legacy'))) {
        await runner.query('DROP TABLE delivery_attempts_legacy');
      }
      if (!(await existingTables(runner, ['delivery_attempts_legacy'])).size) await runner.query('DROP TABLE events_legacy');
    }
    if (present.has('bot_calls_legacy') && (await isEmpty('bot_calls_legacy'))) await runner.query('DROP TABLE bot_calls_legacy');
  }

  private async deleteInBatches(runner: QueryRunner, sql: string, cutoff: Date | string, start: string, table: string): Promise<Trimmed> {
    const total = { deleted: 0, forgotten: 0 };
    let from = start;
    while (!this.loop.isStopped) {
      const [batch] = (await runner.query(sql, [cutoff, from, RETENTION_BATCH_SIZE])) as BatchOutcome[];
      total.deleted += batch.deleted;
      total.forgotten += batch.forgotten ?? 0;
      retentionDeletedRows.inc({ table }, batch.deleted);
      if (batch.forgotten) retentionDeletedRows.inc({ table: 'event_keys' }, batch.forgotten);
      if (batch.picked < RETENTION_BATCH_SIZE || batch.last === null) break;
      from = batch.last;
      await this.sleep(BATCH_PAUSE_MS);
    }
    return total;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.pause = {
        timer: setTimeout(() => {
          this.pause = null;
          resolve();
        }, ms),
        resolve,
      };
    });
  }
}
