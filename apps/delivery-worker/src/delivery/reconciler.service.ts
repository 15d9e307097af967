import { Inject, Injectable, Logger } from '@nestjs/common';
import { type DeliveryStepRow, openDeliveries, partitions, Sql } from '@app/persistence';
import { DeliveryQueues, ENVIRONMENT, type Environment, RepeatingRun, stepOfRow } from '@app/runtime';
import { deliveryWorkerOptions } from './delivery.processor';
import { reconcilerRequeued } from './delivery.metrics';

const CLAIM_BATCH = 500;
/** Per run; a larger backlog is worked off over the following runs. */
const MAX_BATCHES_PER_RUN = 20;
/** Deliveries one sweep pass looks at; a backlog's region is covered over several passes. */
export const SWEEP_BUDGET = 20_000;

/** How long a delivery may be overdue before it counts as lost: two reconcile intervals (30 s by default), at least 1 s. */
export function reconcileGraceMs(environment: Environment): number {
  return Math.max(1_000, environment.delivery.reconcileIntervalMs * 2);
}

/**
 * How long re-enqueueing waits once Redis lost its contents: a job taken before the loss is still in
 * some worker's hands, and may still make its call and record it, for as long as its lock would have
 * lasted (BullMQ's own bound on a live job). Its delivery looks stored but not queued meanwhile; a job
 * re-added for it now would load the still-pending row and call the destination a second time.
 */
export function holdAfterRedisLossMs(environment: Environment): number {
  return deliveryWorkerOptions(environment).lockDuration ?? 0;
}

function bySeq(a: DeliveryStepRow, b: DeliveryStepRow): number {
  return BigInt(a.event_seq) < BigInt(b.event_seq) ? -1 : 1;
}

/**
 * PostgreSQL is the truth and Redis may lose jobs (flushed, failed over, a crash between storing an
 * event and enqueueing it): every RECONCILE_INTERVAL each worker re-adds the job of every delivery
 * that should have one and is overdue by more than the grace period, found two ways
 * (docs/delivery-model.md): open rows whose due time passed (retries, ordered deliveries), claimed so
 * each is re-added at most once a grace period; and fresh deliveries (nothing attempted, no open row),
 * swept in key order from where the last pass stopped, a bounded number a pass, from the oldest one still
 * fresh once a sweep reaches the grace period's start. Job ids are deterministic, so a job that still
 * exists is not duplicated, and a job for a step already done finds its row moved on and completes as
 * stale. When Redis has lost its contents, the workers still holding jobs taken before finish them first.
 */
@Injectable()
export class Reconciler {
  private readonly logger = new Logger(Reconciler.name);
  private readonly loop: RepeatingRun;
  /** The contents mark last seen (null before the first run), and until when re-enqueueing waits after it changed. */
  private lastMark: string | null = null;
  private holdUntil = 0;

  constructor(
    private readonly sql: Sql,
    private readonly queues: DeliveryQueues,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {
    this.loop = new RepeatingRun(() => this.reconcileOnce(), { intervalMs: environment.delivery.reconcileIntervalMs, what: 'reconciling', logger: this.logger });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Re-enqueues overdue deliveries; returns how many (0 while waiting after a loss of Redis's contents). */
  async reconcileOnce(): Promise<number> {
    if (await this.waitingAfterRedisLoss()) return 0;
    const graceMs = reconcileGraceMs(this.environment);
    const total = (await this.claimDue(new Date(Date.now() - graceMs))) + (await this.sweepFresh(partitions.seqAt(Date.now() - graceMs).toString()));
    if (total > 0) {
      reconcilerRequeued.inc(total);
      this.logger.log(`re-enqueued ${total} overdue deliver${total === 1 ? 'y' : 'ies'}`);
    }
    return total;
  }

  private async claimDue(cutoff: Date): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN && !this.loop.isStopped; batch += 1) {
      const claimed = await this.sql.rows(openDeliveries.CLAIM_DUE_OPEN_DELIVERIES, { cutoff, limit: CLAIM_BATCH });
      const pending = claimed.filter((row) => row.pending).sort(bySeq);
      // A lost add is not lost work: the rows stay open and become overdue again after the grace period.
      // Only jobs that are gone are added: most overdue deliveries of a backlog still have theirs.
      if (pending.length > 0) {
        if (await this.waitingAfterRedisLoss()) break;
        total += await this.queues.addMissing(pending.map(stepOfRow));
      }
      if (claimed.length < CLAIM_BATCH) break;
    }
    return total;
  }

  /**
   * One pass of the sweep (one worker at a time: the sweep's row is locked, SKIP LOCKED). Its position
   * moves on by up to SWEEP_BUDGET deliveries; when it reaches `upTo`, the next sweep starts again from
   * the oldest fresh delivery this one found (none: from `upTo`), so a fresh delivery is looked at
   * once a sweep for as long as it stays fresh.
   */
  private async sweepFresh(upTo: string): Promise<number> {
    return this.sql.transaction(async (runner) => {
      const sweep = await this.sql.first(openDeliveries.READ_SWEEP, {}, runner);
      if (!sweep || BigInt(sweep.position) >= BigInt(upTo)) return 0;
      const rows = await this.sql.rows(openDeliveries.SWEEP_FRESH_DELIVERIES, { after: sweep.position, upTo, budget: SWEEP_BUDGET }, runner);
      const last = rows.find((row) => row.kind === 'last')?.event_seq ?? upTo;
      const fresh = rows.filter((row) => row.kind === 'fresh').sort(bySeq);
      let floor = sweep.cycle_floor === null ? null : BigInt(sweep.cycle_floor);
      let added = 0;
      if (fresh.length > 0) {
        // The sweep's position stays where it was: the next pass after the hold finds them again.
        if (await this.waitingAfterRedisLoss()) return 0;
        const oldest = BigInt(fresh[0].event_seq) - 1n;
        if (floor === null || oldest < floor) floor = oldest;
        added = await this.queues.addMissing(fresh.map(stepOfRow));
      }
      const finished = BigInt(last) >= BigInt(upTo);
      await this.sql.rows(
        openDeliveries.WRITE_SWEEP,
        finished ? { position: (floor ?? BigInt(upTo)).toString(), cycleFloor: null } : { position: last, cycleFloor: floor === null ? null : floor.toString() },
        runner,
      );
      return added;
    });
  }

  /**
   * Asked at the start of a run and again right before each add: a run's commands wait on its Redis
   * connection while Redis is away, so a restart in the middle of a run would otherwise send its adds,
   * unheld, to the emptied Redis while workers still hold the jobs taken before, which would call twice.
   */
  private async waitingAfterRedisLoss(): Promise<boolean> {
    const mark = await this.queues.contentsMark();
    if (this.lastMark !== null && mark !== this.lastMark) {
      const holdMs = holdAfterRedisLossMs(this.environment);
      this.holdUntil = Date.now() + holdMs;
      this.logger.warn(`Redis lost its contents; re-enqueueing stored deliveries in ${holdMs} ms, once the jobs taken before are done`);
    }
    this.lastMark = mark;
    return Date.now() < this.holdUntil;
  }
}
