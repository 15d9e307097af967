import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { counter, ENVIRONMENT, type Environment } from '@app/runtime';

const FIRST_RUN_DELAY_MS = 60_000;
const RUN_INTERVAL_MS = 3_600_000;
export const RETENTION_BATCH_SIZE = 5_000;
/** Between batches, so foreground writes and autovacuum get the disk and row locks back. */
const BATCH_PAUSE_MS = 200;
/** Any fixed number works; it only has to differ from the other advisory locks (migrations use 7_263_511_004). */
export const RETENTION_LOCK_KEY = 7_263_511_005;

const DAY_MS = 86_400_000;

export const retentionDeletedRows = counter('retention_deleted_rows_total', 'Rows deleted by the retention job, by table', ['table']);

export interface RetentionResult {
  events: number;
  botCalls: number;
}

interface BatchOutcome {
  picked: number;
  deleted: number;
  /** Newest created_at of the batch as PostgreSQL text (microseconds kept); null when nothing was picked. */
  last: string | null;
}

/** Listed rather than derived from the pending ones, so a status added later is kept until someone decides. */
const FINAL_STATUSES = `('delivered', 'failed', 'filtered', 'no_endpoint')`;

/**
 * One batch, oldest first along the created_at index. `$2` is where the previous batch stopped (inclusive,
 * for rows sharing a timestamp): without it every batch would walk again over the index entries of the
 * rows already deleted, which stay until vacuum, and a backlog of millions would cost quadratic time.
 * The outer status and age checks are re-evaluated on the current row version when the row was changed
 * meanwhile, so an event an operator redelivers (back to queued) at that moment is kept.
 */
const DELETE_EVENTS_SQL = `
  WITH picked AS (
    SELECT seq, created_at FROM events
     WHERE created_at < $1 AND created_at >= $2::timestamptz AND status IN ${FINAL_STATUSES}
     ORDER BY created_at
     LIMIT $3
  ),
  removed AS (
    DELETE FROM events
     WHERE seq IN (SELECT seq FROM picked) AND status IN ${FINAL_STATUSES} AND created_at < $1
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT max(created_at) FROM picked)::text AS last`;

const DELETE_BOT_CALLS_SQL = `
  WITH picked AS (
    SELECT id, created_at FROM bot_calls
     WHERE created_at < $1 AND created_at >= $2::timestamptz
     ORDER BY created_at
     LIMIT $3
  ),
  removed AS (
    DELETE FROM bot_calls WHERE id IN (SELECT id FROM picked) RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT max(created_at) FROM picked)::text AS last`;

/**
 * Keeps `events` (with `delivery_attempts`, which go by ON DELETE CASCADE) and `bot_calls` at a bounded
 * size: every hour one worker deletes final events and bot calls older than RETENTION_DAYS, in batches
 * with a pause between them. Pending events are never touched, however old. Workers that find the
 * advisory lock taken skip the round: one deleter is enough, and several would only contend on the
 * same rows.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionService.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private pause: { timer: NodeJS.Timeout; resolve: () => void } | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(FIRST_RUN_DELAY_MS);
  }

  /** Runs before the DataSource closes: a round in progress stops after its current batch and lets go of the lock. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pause) {
      clearTimeout(this.pause.timer);
      this.pause.resolve();
      this.pause = null;
    }
    await this.running;
  }

  /** One round; answers zeros when another worker holds the lock. */
  async runOnce(): Promise<RetentionResult> {
    const cutoff = new Date(Date.now() - this.environment.retention.days * DAY_MS);
    const runner = this.dataSource.createQueryRunner();
    let pid: number | null = null;
    try {
      const [lock] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked, pg_backend_pid() AS pid', [
        RETENTION_LOCK_KEY,
      ])) as { locked: boolean; pid: number }[];
      if (!lock.locked) {
        this.logger.debug('retention skipped: another worker is running it');
        return { events: 0, botCalls: 0 };
      }
      pid = lock.pid;
      const events = await this.deleteInBatches(runner, DELETE_EVENTS_SQL, cutoff, 'events');
      const botCalls = await this.deleteInBatches(runner, DELETE_BOT_CALLS_SQL, cutoff, 'bot_calls');
      this.logger.log(
        `retention deleted ${events} event(s) (with their attempts) and ${botCalls} bot call(s) created before ${cutoff.toISOString()}`,
      );
      return { events, botCalls };
    } finally {
      await this.unlock(runner, pid);
    }
  }

  private async deleteInBatches(runner: QueryRunner, sql: string, cutoff: Date, table: string): Promise<number> {
    let total = 0;
    let from = '-infinity';
    while (!this.stopped) {
      const [batch] = (await runner.query(sql, [cutoff, from, RETENTION_BATCH_SIZE])) as BatchOutcome[];
      total += batch.deleted;
      retentionDeletedRows.inc({ table }, batch.deleted);
      if (batch.picked < RETENTION_BATCH_SIZE || batch.last === null) break;
      from = batch.last;
      await this.sleep(BATCH_PAUSE_MS);
    }
    return total;
  }

  private async unlock(runner: QueryRunner, pid: number | null): Promise<void> {
    try {
      if (pid !== null) await runner.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
    } catch (error) {
      // A pooled connection still holding the lock would make every worker skip retention for as long as
      // it lives; ending its session frees the lock (and the pool drops the dead connection).
      this.logger.warn(`releasing the retention lock failed (${(error as Error).message}); ending that session`);
      await this.dataSource.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => undefined);
    } finally {
      await runner.release();
    }
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

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runOnce()
        .then(
          () => undefined,
          (error: Error) => this.logger.warn(`retention failed: ${error.message}`),
        )
        .finally(() => {
          this.running = null;
          this.schedule(RUN_INTERVAL_MS);
        });
    }, delayMs);
  }
}
