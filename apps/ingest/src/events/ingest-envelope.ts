import type { ArgumentMetadata } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import {
  envelopeShapeProblems,
  EVENT_ACTIONS,
  isPlainObject,
  isPrototypeMemberName,
  MAX_RECORD_ID,
  plainTreeUnchanged,
  withoutPrototypeMemberKeys,
} from '@app/payloads';
import { validateSync } from 'class-validator';
import { createValidationPipe, type ErrorDetail, flattenValidationErrors, validationFailed } from '@app/runtime';
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

/**
 * The depth limit and the `__proto__` refusal (CONTRACT §4), checked before anything copies or walks the
 * body recursively (class-transformer's copy would overflow the stack on thousands of levels, and would
 * act on a `__proto__` key). `prefix` names where the envelope sits in the request body.
 */
export function assertEnvelopeShape(envelope: unknown, prefix = ''): void {
  const problems = envelopeProblems(envelope, prefix);
  if (problems.length > 0) throw validationFailed(problems);
}

/**
 * The shape's problems, and envelope fields named like Object.prototype's members, which the pipe's
 * copy would skip rather than refuse as unknown: named as the pipe names every other unknown field.
 */
function envelopeProblems(envelope: unknown, prefix: string): ErrorDetail[] {
  const problems: ErrorDetail[] = envelopeShapeProblems(envelope).map(({ path, problem }) => ({ path: prefixed(prefix, path), problem }));
  if (problems.length > 0 || !isPlainObject(envelope)) return problems;
  for (const key of Object.keys(envelope)) {
    if (isPrototypeMemberName(key)) problems.push({ path: prefixed(prefix, key), problem: `property ${key} should not exist` });
  }
  return problems;
}

function prefixed(prefix: string, path: string): string {
  if (!prefix) return path;
  return path === '' || path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

/**
 * The pipe's DTO with the sender's own message: class-transformer's copy leaves out keys named like
 * Object.prototype's members (`constructor`, `toString`…), which are ordinary fields to be delivered
 * unchanged (CONTRACT §4). The pipe only checks that `message` is an object; the message is judged later.
 */
function withOriginalMessage(dto: IngestEventDto, envelope: unknown): IngestEventDto {
  if (isPlainObject(envelope) && isPlainObject(envelope.message)) dto.message = envelope.message;
  return dto;
}

/** POST /v1/events: the DTO, or a 422 (thrown): the shape's, or the global pipe's. */
export async function ingestEnvelope(body: unknown): Promise<IngestEventDto> {
  const plain = plainEnvelope(body);
  if (plain) return plain;
  assertEnvelopeShape(body);
  return withOriginalMessage(await throughPipe(withoutPrototypeMemberKeys(body), IngestEventDto), body);
}

/**
 * One batch item's envelope, checked the way the global ValidationPipe checks a single event: the DTO
 * (with the sender's own message), or what is wrong with it, with paths under `prefix` (`events[i]`).
 */
export function itemEnvelope(item: Record<string, unknown>, prefix: string): IngestEventDto | ErrorDetail[] {
  const plain = plainEnvelope(item);
  if (plain) return plain;
  const problems = envelopeProblems(item, prefix);
  if (problems.length > 0) return problems;
  const dto = plainToInstance(IngestEventDto, withoutPrototypeMemberKeys(item));
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) return flattenValidationErrors(errors, prefix);
  return withOriginalMessage(dto, item);
}

/**
 * POST /v1/events/batch: the items, or the pipe's 422 (thrown). Items are judged one by one later
 * and not copied here: an item the plain check does not accept is copied and checked then, which
 * gives what the pipe's copy would have, provided no item holds a key the copy would drop.
 */
export async function batchEnvelope(body: unknown): Promise<unknown[]> {
  const events: unknown = isPlainObject(body) && Object.getPrototypeOf(body) === Object.prototype && Object.keys(body).length === 1 ? body.events : undefined;
  if (Array.isArray(events) && events.length <= MAX_BATCH_EVENTS && plainTreeUnchanged(events)) return events as unknown[];
  if (!isPlainObject(body) || !Array.isArray(body.events)) {
    assertEnvelopeShape(body);
    return (await throughPipe(withoutPrototypeMemberKeys(body), IngestBatchDto)).events;
  }
  // The items are judged one by one later (one bad item rejects only itself): the pipe sees placeholders
  // of them, so it neither copies them (dropping keys) nor walks their depth.
  const items = body.events as unknown[];
  const rest: Record<string, unknown> = { ...body, events: [] };
  assertEnvelopeShape(rest);
  await throughPipe({ ...(withoutPrototypeMemberKeys(rest) as object), events: items.map(() => null) }, IngestBatchDto);
  return items;
}
