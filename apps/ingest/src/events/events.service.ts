import { Injectable } from '@nestjs/common';
import { isPlainObject, type MessageProblem, validateEventMessage } from '@app/payloads';
import type { IncomingHttpHeaders } from 'node:http';
import { type DeliveryJobData, DeliveryProducer, DomainError, type ErrorDetail, knownErrorStatus, inSpan, requestSpan, stampIngestStages, stampNow, traceCarrier, validationFailed } from '@app/runtime';
import { generateEventId } from './event-id';
import { EventStore, firstSteps, type NewEvent, type StoreOutcome } from './event-store.service';
import { GroupCommitService } from './group-commit.service';
import { batchEnvelope, ingestEnvelope, itemEnvelope } from './ingest-envelope';
import type { IngestEventDto } from './ingest-event.dto';
import { ingestedEvents } from './ingest-metrics';

export interface IngestResult {
  event_id: string;
  status: 'accepted' | 'duplicate';
}

export interface BatchItemResult {
  index: number;
  event_id?: string;
  status: 'accepted' | 'duplicate' | 'rejected';
  details?: ErrorDetail[];
}

/** The answer of `POST /v1/events/batch`: one result per item, in order. */
export interface BatchResult {
  results: BatchItemResult[];
}

/** 202 when stored now, 200 when the same account already sent this event_id (CONTRACT §4). */
export function ingestStatus(result: IngestResult): 202 | 200 {
  return result.status === 'accepted' ? 202 : 200;
}

/** `message` + `cellphones[0].id` → `message.cellphones[0].id`; an empty path names the message itself. */
function underPrefix(prefix: string, path: string): string {
  if (path === '') return prefix;
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

function messageDetails(problems: readonly MessageProblem[], prefix: string): ErrorDetail[] {
  return problems.map((problem) => ({ path: underPrefix(prefix, problem.path), problem: problem.problem }));
}

function toNewEvent(dto: IngestEventDto): NewEvent {
  return { eventId: dto.event_id ?? generateEventId(), accountId: dto.account_id, action: dto.action, message: dto.message };
}

/** Checks one batch item the way the global ValidationPipe checks a single event, with paths under `events[i]`. */
function validateBatchItem(item: unknown, index: number): { event: NewEvent } | { details: ErrorDetail[] } {
  const prefix = `events[${index}]`;
  if (!isPlainObject(item)) return { details: [{ path: prefix, problem: 'each event must be a JSON object' }] };
  const dto = itemEnvelope(item, prefix);
  if (Array.isArray(dto)) return { details: dto };
  const problems = validateEventMessage(dto.action, dto.message);
  if (problems.length > 0) return { details: messageDetails(problems, `${prefix}.message`) };
  return { event: toNewEvent(dto) };
}

/** Echo the sender's id on rejected items when it is a plausible one, so they can match results to events. */
function echoedEventId(item: unknown): string | undefined {
  const candidate = isPlainObject(item) ? item.event_id : undefined;
  return typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 128 ? candidate : undefined;
}

@Injectable()
export class EventsService {
  constructor(
    private readonly store: EventStore,
    private readonly producer: DeliveryProducer,
    private readonly groupCommit: GroupCommitService,
  ) {}

  /**
   * POST /v1/events: answers only after the row is committed (concurrent requests share the
   * statement: see GroupCommitService). Counts the outcome; 5xx answers are not a verdict on the event.
   */
  ingestOne(body: unknown, headers?: IncomingHttpHeaders): Promise<IngestResult> {
    const acceptedAt = stampNow();
    return requestSpan('POST /v1/events', headers, () => this.ingestOneTraced(body, acceptedAt));
  }

  private async ingestOneTraced(body: unknown, acceptedAt: number): Promise<IngestResult> {
    try {
      const result = await this.storeOne(await inSpan('ingest.validate', () => ingestEnvelope(body)), acceptedAt);
      ingestedEvents.inc({ outcome: result.status });
      return result;
    } catch (error) {
      if ((knownErrorStatus(error) ?? 500) < 500) ingestedEvents.inc({ outcome: 'rejected' });
      throw error;
    }
  }

  private async storeOne(dto: IngestEventDto, acceptedAt: number): Promise<IngestResult> {
    const problems = validateEventMessage(dto.action, dto.message);
    if (problems.length > 0) throw validationFailed(messageDetails(problems, 'message'));
    const event = toNewEvent(dto);
    const outcome = await this.groupCommit.commit(event, acceptedAt);
    switch (outcome.kind) {
      case 'accepted':
        return { event_id: event.eventId, status: 'accepted' };
      case 'duplicate':
        return { event_id: event.eventId, status: 'duplicate' };
      case 'unknown_account':
        throw new DomainError('not_found', `account ${event.accountId} does not exist`);
      case 'conflict':
        throw new DomainError('conflict', `event_id ${event.eventId} is already used by another account`);
    }
  }

  /** POST /v1/events/batch from its body: the envelope's 422 (thrown), or each item's result. */
  ingestBatchBody(body: unknown, headers?: IncomingHttpHeaders): Promise<BatchItemResult[]> {
    return requestSpan('POST /v1/events/batch', headers, async () => this.ingestBatch(await batchEnvelope(body)));
  }

  /**
   * POST /v1/events/batch: every item is validated on its own, the valid ones are stored with one
   * statement and enqueued with one Redis call, and each item gets its own result.
   */
  async ingestBatch(items: readonly unknown[]): Promise<BatchItemResult[]> {
    const acceptedAt = stampNow();
    const results: BatchItemResult[] = new Array<BatchItemResult>(items.length);
    const valid: { index: number; event: NewEvent }[] = [];
    await inSpan('ingest.validate', () =>
      items.forEach((item, index) => {
        const checked = validateBatchItem(item, index);
        if ('event' in checked) valid.push({ index, event: checked.event });
        else results[index] = { index, ...optionalEventId(echoedEventId(item)), status: 'rejected', details: checked.details };
      }),
    );

    const outcomes: StoreOutcome[] = await inSpan('ingest.store', () => this.store.store(valid.map((entry) => entry.event)));
    const committedAt = stampNow();
    await inSpan('ingest.enqueue', async () => {
      const accepted: DeliveryJobData[] = [];
      valid.forEach(({ index, event }, position) => {
        const outcome = outcomes[position];
        results[index] = this.batchResult(index, event, outcome);
        if (outcome.kind === 'accepted') for (const step of firstSteps(outcome, event.accountId)) accepted.push({ ...step, ...traceCarrier() });
      });
      await this.producer.enqueue(accepted);
      const enqueuedAt = stampNow();
      for (const outcome of outcomes) if (outcome.kind === 'accepted') stampIngestStages(acceptedAt, committedAt, enqueuedAt);
    });

    const tally = { accepted: 0, duplicate: 0, rejected: 0 };
    for (const result of results) tally[result.status] += 1;
    for (const [outcome, count] of Object.entries(tally)) if (count > 0) ingestedEvents.inc({ outcome }, count);
    return results;
  }

  private batchResult(index: number, event: NewEvent, outcome: StoreOutcome): BatchItemResult {
    const base = { index, event_id: event.eventId };
    switch (outcome.kind) {
      case 'accepted':
        return { ...base, status: 'accepted' };
      case 'duplicate':
        return { ...base, status: 'duplicate' };
      case 'unknown_account':
        return {
          ...base,
          status: 'rejected',
          details: [{ path: `events[${index}].account_id`, problem: `account ${event.accountId} does not exist` }],
        };
      case 'conflict':
        return {
          ...base,
          status: 'rejected',
          details: [{ path: `events[${index}].event_id`, problem: 'event_id is already used by another account' }],
        };
    }
  }
}

function optionalEventId(eventId: string | undefined): { event_id?: string } {
  return eventId === undefined ? {} : { event_id: eventId };
}
