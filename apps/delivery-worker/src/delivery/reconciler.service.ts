import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isPendingSql, isUndatedSql } from '@app/persistence';
import { DeliveryQueues, ENVIRONMENT, type Environment, loggableErrorText, pendingDestinationStep, pendingRowStep } from '@app/runtime';
import { deliveryWorkerOptions } from './delivery.processor';
import { reconcilerRequeued } from './delivery.metrics';

const CLAIM_BATCH = 500;
/** Per run; a larger backlog is worked off over the following runs. */
const MAX_BATCHES_PER_RUN = 20;

/**
 * Claims overdue pending events and pushes next_attempt_at to now, so each is re-enqueued at most once
 * per grace period and several workers reconciling at once claim disjoint rows (SKIP LOCKED). The
 * range condition lets events_pending_due_idx stop at the first row not yet due. Every writer sets
 * next_attempt_at on pending rows; rows without one are claimed too (an index lookup of NULLs), so an
 * event stored some other way is not stranded.
 */
const CLAIM_SQL = `
  WITH due AS (
    SELECT seq FROM events
     WHERE ${isPendingSql()} AND next_attempt_at < $1
     ORDER BY next_attempt_at
     LIMIT $2
       FOR UPDATE SKIP LOCKED
  ),
  undated AS (
    SELECT seq FROM events
     WHERE ${isUndatedSql()}
       AND NOT EXISTS (SELECT 1 FROM callback_settings s WHERE s.account_id = events.account_id AND s.paused)
     LIMIT $2
       FOR UPDATE SKIP LOCKED
  )
  UPDATE events e
     SET next_attempt_at = now()
    FROM (SELECT seq FROM due UNION SELECT seq FROM undated) picked
   WHERE e.seq = picked.seq
  RETURNING e.seq::text AS seq, e.account_id, e.series, e.series_attempts`;

/**
 * The same for deliveries to extra destinations (CONTRACT §11). A paused destination's deliveries wait
 * without a due time (its resume enqueues them), so undated rows of paused destinations stay; those of
 * a deleted destination are taken, and their job ends them.
 */
const CLAIM_DESTINATIONS_SQL = `
  WITH due AS (
    SELECT event_seq, destination_id FROM destination_deliveries
     WHERE ${isPendingSql()} AND next_attempt_at < $1
     ORDER BY next_attempt_at
     LIMIT $2
       FOR UPDATE SKIP LOCKED
  ),
  undated AS (
    SELECT event_seq, destination_id FROM destination_deliveries d
     WHERE ${isUndatedSql('d')}
       AND NOT EXISTS (SELECT 1 FROM destinations x WHERE x.id = d.destination_id AND x.paused AND x.deleted_at IS NULL)
     LIMIT $2
       FOR UPDATE SKIP LOCKED
  )
  UPDATE destination_deliveries d
     SET next_attempt_at = now()
    FROM (SELECT * FROM due UNION SELECT * FROM undated) picked
   WHERE d.event_seq = picked.event_seq AND d.destination_id = picked.destination_id
  RETURNING d.event_seq::text AS event_seq, d.account_id, d.destination_id, d.series, d.series_attempts`;

type ClaimedDelivery = { event_seq: string; account_id: number; destination_id: string; series: number; series_attempts: number };

/** How long an event may be overdue before it counts as lost: two reconcile intervals (30 s by default), at least 1 s. */
export function reconcileGraceMs(environment: Environment): number {
  return Math.max(1_000, environment.delivery.reconcileIntervalMs * 2);
}

/**
 * How long re-enqueueing waits once Redis lost its contents: a job taken before the loss is still in
 * some worker's hands, and may still make its call and record it, for as long as its lock would have
 * lasted (BullMQ's own bound on a live job). Its event looks stored but not queued meanwhile; a job
 * re-added for it now would load the still-pending row and call the endpoint a second time.
 */
export function holdAfterRedisLossMs(environment: Environment): number {
  return deliveryWorkerOptions(environment).lockDuration ?? 0;
}

/**
 * PostgreSQL is the truth and Redis may lose jobs (flushed, failed over, a crash between storing an
 * event and enqueueing it): every RECONCILE_INTERVAL each worker re-adds the job of every pending event
 * that is overdue by more than the grace period. Job ids are deterministic, so a job that still exists
 * is not duplicated, and a job for a step already done finds its row moved on and completes as stale.
 * When Redis has lost its contents (its contents mark changed), the workers still holding jobs taken
 * before finish them first (holdAfterRedisLossMs).
 */
@Injectable()
export class Reconciler {
  private readonly logger = new Logger(Reconciler.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** The contents mark last seen (null before the first run), and until when re-enqueueing waits after it changed. */
  private lastMark: string | null = null;
  private holdUntil = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queues: DeliveryQueues,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  start(): void {
    if (this.stopped || this.timer || this.running) return;
    this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Re-enqueues overdue pending events; returns how many (0 while waiting after a loss of Redis's contents). */
  async reconcileOnce(): Promise<number> {
    if (await this.waitingAfterRedisLoss()) return 0;
    const cutoff = new Date(Date.now() - reconcileGraceMs(this.environment));
    let total = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN && !this.stopped; batch += 1) {
      // An UPDATE answers [rows, count] through TypeORM.
      const [claimed] = await this.dataSource.query<[{ seq: string; account_id: number; series: number; series_attempts: number }[], number]>(CLAIM_SQL, [
        cutoff,
        CLAIM_BATCH,
      ]);
      if (claimed.length === 0) break;
      // A lost add is not lost work: the rows stay pending and become overdue again after the grace period.
      await this.queues.addBulk(claimed.map(pendingRowStep));
      total += claimed.length;
      if (claimed.length < CLAIM_BATCH) break;
    }
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN && !this.stopped; batch += 1) {
      const [claimed] = await this.dataSource.query<[ClaimedDelivery[], number]>(CLAIM_DESTINATIONS_SQL, [cutoff, CLAIM_BATCH]);
      if (claimed.length === 0) break;
      await this.queues.addBulk(claimed.sort((a, b) => (BigInt(a.event_seq) < BigInt(b.event_seq) ? -1 : 1)).map(pendingDestinationStep));
      total += claimed.length;
      if (claimed.length < CLAIM_BATCH) break;
    }
    if (total > 0) {
      reconcilerRequeued.inc(total);
      this.logger.log(`re-enqueued ${total} overdue pending event(s) and destination deliveries`);
    }
    return total;
  }

  private async waitingAfterRedisLoss(): Promise<boolean> {
    const mark = await this.queues.contentsMark();
    if (this.lastMark !== null && mark !== this.lastMark) {
      const holdMs = holdAfterRedisLossMs(this.environment);
      this.holdUntil = Date.now() + holdMs;
      this.logger.warn(`Redis lost its contents; re-enqueueing stored events in ${holdMs} ms, once the jobs taken before are done`);
    }
    this.lastMark = mark;
    return Date.now() < this.holdUntil;
  }

  private tick(): void {
    this.running = this.reconcileOnce()
      .then(
        () => undefined,
        (error: unknown) => this.logger.warn(`reconciling failed: ${loggableErrorText(error)}`),
      )
      .finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.environment.delivery.reconcileIntervalMs);
      });
  }
}
