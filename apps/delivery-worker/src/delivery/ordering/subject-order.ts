import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { openDeliveries, Sql } from '@app/persistence';
import { Batcher, DeliveryQueues, deliveryJobId, deliveryStep, ENVIRONMENT, type Environment, loggableErrorText, REDIS, RedisKeys } from '@app/runtime';
import { subjectReleases } from '../delivery.metrics';
import type { PendingDelivery } from '../loading/delivery-loader';

/** The nearest open delivery of the same destination and subject on one side of a delivery. */
type PendingNeighbour = Omit<openDeliveries.SubjectNeighbourRow, 'i'>;

/** A delivery in the order's books: its destination's deliveries of one subject go one at a time. */
type Ordered = Pick<PendingDelivery, 'seq' | 'destinationId' | 'accountId' | 'series' | 'subject'>;

/** Deliveries of one event to two destinations are two entries of the order, each in its own destination's. */
function keyOf(delivery: Pick<PendingDelivery, 'seq' | 'destinationId'>): string {
  return `${delivery.seq}/${delivery.destinationId}`;
}

/** How long a release mark waits for the held job it names to reach the delayed set (and a hold mark outlives its hold). */
const RELEASE_MARK_MS = 30_000;
/** The two values of a job's subject mark: who wrote it last, the release of the event ahead or the held job. */
const RELEASED = 'released';
const HELD = 'held';
/**
 * How long a job may wait in this process for the event ahead of it to end, when this process is working
 * on that event: beyond it (a slow or hanging call), the job is held in the delayed set as usual.
 */
export const LOCAL_HOLD_MS = 2_000;

/**
 * Ordering "subject" (CONTRACT §9): an event is called only when no earlier event of its subject is
 * still pending. The rows are the only state, so the order holds across any number of workers and
 * through crashes (a call repeated after a crash is still never overtaken); an event that waits for its
 * next attempt holds the later events of its subject until it ends.
 *
 * A held event's job waits in BullMQ's delayed set. The worker that records the end of the event ahead
 * promotes the next one's job at once (`release`), so a subject's chain costs no polling; the timed
 * re-check (ORDERING_RECHECK) only covers a promote that was lost (a crash between the two, Redis away).
 * The held job may still be on its way to the delayed set (checked before the end was committed, not
 * yet moved), or not taken at all yet (it then needs nothing): the release and the held job, once in
 * the delayed set (`afterHold`), each write the job's mark and read what it was, in one command, so the
 * second of the two promotes it, and a job never held costs its release no promote.
 *
 * When the event ahead is one this worker is working on (a subject's events are often in one worker's
 * hands together), the later job waits here for its end instead (`holdMs`, at most LOCAL_HOLD_MS), and
 * then asks the rows again: one take per event instead of two, and no trip through the delayed set.
 * When that event was the only one pending ahead of it, its release lets it go with no question at all.
 */
@Injectable()
export class SubjectOrder {
  private readonly logger = new Logger(SubjectOrder.name);
  private readonly recheckMs: number;

  private readonly earlier: Batcher<Ordered, PendingNeighbour | undefined>;
  private readonly next: Batcher<Ordered, PendingNeighbour | undefined>;
  /** The ordered events this process is working on now, by seq: resolved when the work is over. */
  private readonly working = new Map<string, Promise<void>>();
  /**
   * Events whose job waits in `holdMs` for the end of the event ahead, by seq: which event that is (the
   * earliest pending one of the subject when it asked), and what lets it go at once.
   */
  private readonly waitingHere = new Map<string, { ahead: string; letGo: () => void }>();
  /**
   * Of those, the ones whose event ahead was the only pending one of the subject before them when they
   * asked, by that event's seq: its end lets them go with no question (`release`).
   */
  private readonly aloneBehind = new Map<string, string>();

  constructor(
    sql: Sql,
    private readonly queues: DeliveryQueues,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    this.recheckMs = environment.delivery.orderingRecheckMs;
    this.earlier = neighbourBatcher(sql, openDeliveries.SUBJECT_AHEAD);
    this.next = neighbourBatcher(sql, openDeliveries.SUBJECT_NEXT);
  }

  /**
   * This process starts working on an event of an ordered endpoint, from the moment its job is taken
   * (before its load: loads run in parallel batches, so a later job's may come back first); the returned
   * function says it is over (after its release). A later job of the subject that finds this event ahead
   * of it waits for that here (`holdMs`) instead of going through the delayed set and being taken again.
   */
  startWorking(delivery: Pick<PendingDelivery, 'seq' | 'destinationId' | 'series'>): () => void {
    const key = keyOf(delivery);
    if (delivery.series !== 0 || this.working.has(key)) return () => undefined;
    let end: () => void = () => undefined;
    this.working.set(key, new Promise<void>((resolve) => (end = resolve)));
    return () => {
      this.working.delete(key);
      end();
    };
  }

  /**
   * Null when the event may be called now; else how long to wait before asking again (ms), unless
   * released sooner. While the event ahead is one this process is working on, waits for its end (at
   * most LOCAL_HOLD_MS): the release of that event lets it go when its own question (the next pending
   * event after the one that ended) names this one; otherwise it asks again. The rows stay the only
   * judge, this only saves the trip through the delayed set and, mostly, the second question.
   */
  async holdMs(delivery: Ordered): Promise<number | null> {
    if (delivery.series !== 0 || delivery.subject === null) return null;
    const own = keyOf(delivery);
    const waitUntil = Date.now() + LOCAL_HOLD_MS;
    for (;;) {
      const found = await this.earlier.submit(delivery);
      if (!found) return null;
      const ahead = keyOf({ seq: found.seq, destinationId: delivery.destinationId });
      const ending = this.working.get(ahead);
      const left = waitUntil - Date.now();
      if (ending && left > 0) {
        // Registered only while it waits: a release that finds it here lets it go; one that does not
        // promotes as usual, and this job asks again after the end (or its timeout).
        let letGo: () => void = () => undefined;
        const released = new Promise<'released'>((resolve) => (letGo = () => resolve('released')));
        this.waitingHere.set(own, { ahead, letGo });
        if (found.alone) this.aloneBehind.set(ahead, own);
        const woken = await firstOf(ending, released, left);
        this.waitingHere.delete(own);
        if (this.aloneBehind.get(ahead) === own) this.aloneBehind.delete(ahead);
        if (woken === 'released') return null;
        continue;
      }
      // The delivery ahead waits for a later attempt: nothing can change before then.
      const dueIn = found.status === 'retrying' && found.next_attempt_at ? found.next_attempt_at.getTime() - Date.now() : 0;
      return Math.max(this.recheckMs, dueIn + this.recheckMs);
    }
  }

  /**
   * The event just ended (delivered, failed, filtered, no endpoint; its row is committed): the next
   * pending event of its subject may go now, so its held job is promoted. Never throws: a release that
   * does not happen only leaves the held event to its timed re-check.
   */
  async release(event: Ordered, now = Date.now()): Promise<void> {
    if (event.series !== 0 || event.subject === null) return;
    // The job waiting here behind this event alone goes with no question, whose answer could only name
    // it: an event that ended never becomes pending again in its first series (a redelivery is a series
    // of its own, outside the order), and an event accepted after the job asked comes after it.
    if (this.letGoWaiting(this.aloneBehind.get(keyOf(event)), event, 'waiting_alone')) return;
    try {
      const next = await this.next.submit(event);
      // A next event waiting for its own later attempt keeps its time: only a due one is released.
      if (!next || (next.status === 'retrying' && next.next_attempt_at && next.next_attempt_at.getTime() > now)) {
        subjectReleases.inc({ outcome: 'none' });
        return;
      }
      // The next one's job waits in this worker for this end: it may go now. This event was the earliest
      // pending one of the subject when it asked, and nothing is pending between the two (this question).
      // An event that ended while an earlier one was still pending (settled without a call, say) is not
      // what the job waits for: the job keeps waiting for the earlier one.
      if (this.letGoWaiting(keyOf({ seq: next.seq, destinationId: event.destinationId }), event, 'waiting_here')) return;
      const jobId = deliveryJobId(deliveryStep({ eventSeq: next.seq, accountId: event.accountId, destinationId: event.destinationId, series: 0, attempt: next.series_attempts }));
      // One command leaves the mark and says whether the job is held (afterHold marked it so). A job not
      // held yet finds the mark once it is; a job never held (not taken yet) needs nothing at all.
      const found = await this.redis.set(this.keys.subjectRelease(jobId), RELEASED, 'PX', RELEASE_MARK_MS, 'GET');
      subjectReleases.inc({ outcome: found === HELD && (await this.promote(event.accountId, jobId)) ? 'promoted' : 'not_delayed' });
    } catch (error) {
      this.logger.warn(`could not release the next delivery of the subject of ${keyOf(event)}: ${loggableErrorText(error)}`);
    }
  }

  /**
   * Lets the job of event `waiterSeq` go, when it waits here for the end of `ended` (its own hold's
   * bookkeeping is undone by `holdMs` when it wakes). False when it waits for another event or not here.
   */
  private letGoWaiting(waiter: string | undefined, ended: Ordered, outcome: 'waiting_here' | 'waiting_alone'): boolean {
    const waiting = waiter === undefined ? undefined : this.waitingHere.get(waiter);
    if (waiter === undefined || waiting?.ahead !== keyOf(ended)) return false;
    this.waitingHere.delete(waiter);
    waiting.letGo();
    subjectReleases.inc({ outcome });
    return true;
  }

  /**
   * The held job is now in the delayed set for `heldMs`: it says so (the mark the release reads), and
   * when the event ahead ended meanwhile (its release left its mark first), the job promotes itself.
   * Whichever of the two writes second sees the other's, so one of them always promotes it. Never throws
   * (the re-check remains).
   */
  async afterHold(accountId: number, jobId: string, heldMs: number): Promise<void> {
    try {
      const found = await this.redis.set(this.keys.subjectRelease(jobId), HELD, 'PX', heldMs + RELEASE_MARK_MS, 'GET');
      if (found === RELEASED && (await this.promote(accountId, jobId))) subjectReleases.inc({ outcome: 'self' });
    } catch (error) {
      this.logger.warn(`could not look for a release of job ${jobId}: ${loggableErrorText(error)}`);
    }
  }

  /**
   * Moves the job from the delayed set to waiting (BullMQ's promote script, in the job's shard queue, so
   * every key has the shard's hash tag). A job not in the delayed set is on its way there (its mark
   * serves then), or already waiting or running, which needs nothing.
   */
  private async promote(accountId: number, jobId: string): Promise<boolean> {
    return this.queues
      .queueFor(accountId)
      .scripts.promote(jobId)
      .then(
        () => true,
        () => false,
      );
  }
}

/** Group commit of one side's neighbour questions (Batcher): each delivery gets its own row, or undefined. */
function neighbourBatcher(sql: Sql, statement: typeof openDeliveries.SUBJECT_AHEAD): Batcher<Ordered, PendingNeighbour | undefined> {
  return new Batcher<Ordered, PendingNeighbour | undefined>(
    async (deliveries) => {
      const rows = await sql.rows(statement, {
        accountIds: deliveries.map((delivery) => delivery.accountId),
        destinationIds: deliveries.map((delivery) => delivery.destinationId),
        subjects: deliveries.map((delivery) => delivery.subject ?? ''),
        seqs: deliveries.map((delivery) => delivery.seq),
      });
      const byIndex = new Map(rows.map(({ i, ...neighbour }): [number, PendingNeighbour] => [i, neighbour]));
      return deliveries.map((_, index) => ({ ok: true as const, value: byIndex.get(index + 1) }));
    },
    { maxBatch: 200, maxInFlight: 1, lingerMs: 0 },
  );
}

/** Whichever comes first: the work on the event ahead is over, its release let this job go, or the wait ran out. */
async function firstOf(ended: Promise<void>, released: Promise<'released'>, timeoutMs: number): Promise<'ended' | 'released' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const woken = await Promise.race([
    released,
    ended.then(() => 'ended' as const),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
  ]);
  clearTimeout(timer);
  return woken;
}
