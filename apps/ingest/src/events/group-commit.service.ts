import { Injectable } from '@nestjs/common';
import type { Context } from '@opentelemetry/api';
import { Batcher, captureContext, type DeliveryJobData, DeliveryProducer, DomainError, oneByOneOnFailure, type Settled, SharedStepSpans, stampIngestStages, stampNow } from '@app/runtime';
import { EventStore, firstSteps, type NewEvent, type StoreOutcome } from './event-store.service';

/** Statements in flight at once: enough to keep PostgreSQL busy while the next group forms, few enough to let groups grow. */
export const MAX_COMMITS_IN_FLIGHT = 2;
/** Upper bound on one group, so one statement stays short and its parameters small. */
export const MAX_GROUP_EVENTS = 500;

interface Submitted {
  event: NewEvent;
  /** The request's trace context (tracing on only): the shared store and enqueue steps show in each request's trace. */
  trace?: Context;
  /** When the request was handed to ingest (epoch ms), then when its statement committed: the stage stamps. */
  acceptedAt: number;
  committedAt?: number;
}

function isUnavailable(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'service_unavailable';
}

/**
 * Group commit for single-event requests. Each request costs a statement, a commit (a WAL flush) and
 * a Redis round trip, and those, not the event, are what a request's CPU went to. Events that arrive
 * while earlier statements run wait for the next one, so under load one INSERT and one queue add per
 * shard serve many requests; when idle, an event is stored on the next turn of the event loop and waits
 * for nothing. Every caller is answered only after the statement holding its event committed (and its
 * job add was tried), with its own outcome: the store resolves duplicates and conflicts per item,
 * exactly as separate requests would, the first of two equal ids claiming it. The grouping is the
 * shared Batcher (@app/runtime), the one the worker's reads and records use.
 */
@Injectable()
export class GroupCommitService {
  private readonly batcher: Batcher<Submitted, StoreOutcome>;

  constructor(
    private readonly store: EventStore,
    private readonly producer: DeliveryProducer,
  ) {
    // Nothing of a failed group was stored; split it (unless the database is away) so only the request
    // whose event failed sees the error. The slot is held for the statement only: the queue add runs
    // beside the next statement.
    this.batcher = new Batcher(oneByOneOnFailure((group: Submitted[]) => this.storeGroup(group), { splitOn: (error) => !isUnavailable(error) }), {
      maxBatch: MAX_GROUP_EVENTS,
      maxInFlight: MAX_COMMITS_IN_FLIGHT,
      lingerMs: 0,
      afterBatch: (group, outcomes) => this.enqueueAccepted(group, outcomes),
    });
  }

  /** Stores one event with whatever else is waiting, enqueues its first step when accepted, and says what became of it. */
  commit(event: NewEvent, acceptedAt: number = stampNow()): Promise<StoreOutcome> {
    return this.batcher.submit({ event, trace: captureContext(), acceptedAt });
  }

  private async storeGroup(group: readonly Submitted[]): Promise<StoreOutcome[]> {
    const spans = new SharedStepSpans('ingest.store', group.map((submitted) => submitted.trace));
    try {
      const outcomes = await this.store.store(group.map((submitted) => submitted.event));
      const committedAt = stampNow();
      for (const submitted of group) submitted.committedAt = committedAt;
      spans.end();
      return outcomes;
    } catch (error) {
      spans.end(error);
      throw error;
    }
  }

  /** The producer never throws: when Redis is away it logs and the reconciler enqueues the stored steps later. */
  private async enqueueAccepted(group: readonly Submitted[], outcomes: readonly Settled<StoreOutcome>[]): Promise<void> {
    const steps: DeliveryJobData[] = [];
    const spans = new SharedStepSpans('ingest.enqueue', group.map((submitted) => submitted.trace));
    group.forEach((submitted, position) => {
      const settled = outcomes[position];
      const traceparent = spans.traceparent(position);
      if (settled?.ok && settled.value.kind === 'accepted') {
        for (const step of firstSteps(settled.value, submitted.event.accountId)) steps.push({ ...step, ...(traceparent ? { traceparent } : {}) });
      }
    });
    // enqueue() reports failures by its result; the catch only keeps callers from waiting forever.
    await this.producer.enqueue(steps).catch(() => false);
    const enqueuedAt = stampNow();
    group.forEach((submitted, position) => {
      const settled = outcomes[position];
      if (!settled?.ok || settled.value.kind !== 'accepted' || submitted.committedAt === undefined) return;
      stampIngestStages(submitted.acceptedAt, submitted.committedAt, enqueuedAt);
    });
    spans.end();
  }
}
