import type { ArgumentMetadata } from '@nestjs/common';
import { EVENT_ACTIONS, isPlainObject, MAX_RECORD_ID, plainTreeUnchanged } from '@app/payloads';
import { createValidationPipe } from '@app/runtime';
import { EVENT_ID_MAX_LENGTH, EVENT_ID_PATTERN } from './event-id';
import { IngestBatchDto, IngestEventDto, MAX_BATCH_EVENTS } from './ingest-event.dto';

/**
 * The envelopes of POST /v1/events and /v1/events/batch, checked without copying the body.
 *
 * The global ValidationPipe turns the body into a DTO with class-transformer, which deep-copies the
 * whole body, `message` included, and then walks it with class-validator; in a batch every item's
 * message was copied three times. Profiles put that at a fifth of ingest's CPU for batches. Here a
 * plain check accepts the common case (every field present and valid, nothing unusual in it) and
 * returns the body as it is; anything else goes through the very ValidationPipe every other route
 * uses, so every error, its text and its order, and every transformation stay exactly as they were.
 * The spec beside this file checks that both ways agree.
 */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['account_id', 'action', 'message', 'event_id']);
const ACTIONS: ReadonlySet<unknown> = new Set(EVENT_ACTIONS);
const pipe = createValidationPipe();

function isRecordId(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_RECORD_ID;
}

/** The envelope as the DTO the pipe would have produced, or undefined when the pipe must judge it. */
export function plainEnvelope(value: unknown): IngestEventDto | undefined {
  if (!isPlainObject(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  for (const key of Object.keys(value)) if (!ENVELOPE_KEYS.has(key)) return undefined;
  const { account_id: accountId, action, message, event_id: eventId } = value;
  if (!isRecordId(accountId) || !ACTIONS.has(action) || !isPlainObject(message)) return undefined;
  if (eventId !== undefined && !(typeof eventId === 'string' && eventId.length <= EVENT_ID_MAX_LENGTH && EVENT_ID_PATTERN.test(eventId))) {
    return undefined;
  }
  if (!plainTreeUnchanged(message)) return undefined;
  return Object.assign(new IngestEventDto(), value);
}

async function throughPipe<T>(value: unknown, metatype: new () => T): Promise<T> {
  const metadata: ArgumentMetadata = { type: 'body', metatype, data: undefined };
  return (await pipe.transform(value, metadata)) as T;
}

/** POST /v1/events: the DTO, or the global pipe's 422 (thrown). */
export async function ingestEnvelope(body: unknown): Promise<IngestEventDto> {
  return plainEnvelope(body) ?? throughPipe(body, IngestEventDto);
}

/**
 * POST /v1/events/batch: the items, or the pipe's 422 (thrown). Items are judged one by one later
 * and not copied here: an item the plain check does not accept is copied and checked then, which
 * gives what the pipe's copy would have, provided no item holds a key the copy would drop.
 */
export async function batchEnvelope(body: unknown): Promise<unknown[]> {
  const events: unknown = isPlainObject(body) && Object.getPrototypeOf(body) === Object.prototype && Object.keys(body).length === 1 ? body.events : undefined;
  if (Array.isArray(events) && events.length <= MAX_BATCH_EVENTS && plainTreeUnchanged(events)) return events as unknown[];
  return (await throughPipe(body, IngestBatchDto)).events;
}
