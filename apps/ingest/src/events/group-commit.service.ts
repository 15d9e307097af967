import { Injectable } from '@nestjs/common';
import type { Context } from '@opentelemetry/api';
import { ApiError, captureContext, DeliveryProducer, type DeliveryJobData, firstDeliveryStep, SharedStepSpans } from '@app/runtime';
import { EventStore, type NewEvent, type StoreOutcome } from './event-store.service';

/** Statements in flight at once: enough to keep PostgreSQL busy while the next group forms, few enough to let groups grow. */
export const MAX_COMMITS_IN_FLIGHT = 2;
/** Upper bound on one group, so one statement stays short and its parameters small. */
export const MAX_GROUP_EVENTS = 500;

interface Waiter {
  event: NewEvent;
  resolve: (outcome: StoreOutcome) => void;
  reject: (error: unknown) => void;
  /** The request's trace context (tracing on only): the shared store and enqueue steps show in each request's trace. */
  trace?: Context;
}

function isUnavailable(error: unknown): boolean {
  return error instanceof ApiError && error.getStatus() === 503;
}

/**
 * Group commit for single-event requests. Each request costs a statement, a commit (a WAL flush) and
 * a Redis round trip, and those, not the event, are what a request's CPU went to. Events that arrive
 * while earlier statements run wait for the next one, so under load one INSERT and one queue add per
 * shard serve many requests; when idle, an event is stored on the next turn of the event loop and waits
 * for nothing. Every caller is answered only after the statement holding its event committed (and its
 * job add was tried), with its own outcome: the store resolves duplicates and conflicts per item,
 * exactly as separate requests would, the first of two equal ids claiming it.
 */
@Injectable()
export class GroupCommitService {
  private pending: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly store: EventStore,
    private readonly producer: DeliveryProducer,
  ) {}

  /** Stores one event with whatever else is waiting, enqueues its first step when accepted, and says what became of it. */
  commit(event: NewEvent): Promise<StoreOutcome> {
    return new Promise<StoreOutcome>((resolve, reject) => {
      this.pending.push({ event, resolve, reject, trace: captureContext() });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_COMMITS_IN_FLIGHT || this.pending.length === 0) return;
    this.scheduled = true;
    // One turn of the event loop: requests whose bodies were read in the same turn share the statement.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.pending.length > 0 && this.inFlight < MAX_COMMITS_IN_FLIGHT) {
      const group = this.pending.splice(0, MAX_GROUP_EVENTS);
      this.inFlight += 1;
      void this.storeGroup(group).finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
    }
  }

  /** The slot is held for the statement only; the queue add runs beside the next statement. */
  private async storeGroup(group: readonly Waiter[]): Promise<void> {
    let outcomes: StoreOutcome[];
    const spans = new SharedStepSpans('ingest.store', group.map((waiter) => waiter.trace));
    try {
      outcomes = await this.store.store(group.map((waiter) => waiter.event));
      spans.end();
    } catch (error) {
      spans.end(error);
      if (group.length === 1 || isUnavailable(error)) {
        for (const waiter of group) waiter.reject(error);
      } else {
        // Nothing of the group was stored. One event may be what failed (an account removed meanwhile, a
        // value the database refuses): store each on its own so only that request sees the error.
        void this.storeEach(group);
      }
      return;
    }
    void this.enqueueAndAnswer(group, outcomes);
  }

  private async storeEach(group: readonly Waiter[]): Promise<void> {
    await Promise.all(
      group.map(async (waiter) => {
        try {
          const [outcome] = await this.store.store([waiter.event]);
          await this.enqueueAndAnswer([waiter], [outcome]);
        } catch (error) {
          waiter.reject(error);
        }
      }),
    );
  }

  /** The producer never throws: when Redis is away it logs and the reconciler enqueues the stored steps later. */
  private async enqueueAndAnswer(group: readonly Waiter[], outcomes: readonly StoreOutcome[]): Promise<void> {
    const steps: DeliveryJobData[] = [];
    const spans = new SharedStepSpans('ingest.enqueue', group.map((waiter) => waiter.trace));
    group.forEach((waiter, position) => {
      const outcome = outcomes[position];
      const traceparent = spans.traceparent(position);
      if (outcome.kind === 'accepted') steps.push({ ...firstDeliveryStep(outcome.seq, waiter.event.accountId), ...(traceparent ? { traceparent } : {}) });
    });
    // enqueue() reports failures by its result; the catch only keeps callers from waiting forever.
    await this.producer.enqueue(steps).catch(() => false);
    spans.end();
    group.forEach((waiter, position) => waiter.resolve(outcomes[position]));
  }
}
