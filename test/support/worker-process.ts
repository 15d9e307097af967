import type { INestApplication } from '@nestjs/common';
import type { ChildProcess } from 'node:child_process';
import { DataSource } from 'typeorm';
import { Sql, STORE_EVENTS, type StoredRow, storeEventsParams } from '@app/persistence/testing';
import type { AttemptView } from '@app/payloads';
import {
  closeRedisConnection,
  createRedisConnection,
  DeliveryQueues,
  ENVIRONMENT,
  type Environment,
  loadEnvironment,
  publishSettingsChanged,
  REDIS,
  type RedisClient,
  RedisKeys,
  waitForReady,
} from '@app/runtime';
import { spawnBuiltApp } from './built-app';
import type { AttemptRow } from '../../apps/config-api/src/admin/events/admin-events.statements';
import { attemptRequestBody } from '../../apps/config-api/src/admin/events/attempt-body';
import { isEventAction, PERMISSION_KEY_BY_ACTION, SAMPLE_MESSAGES, sentHeaders } from '@app/payloads';

/**
 * Helpers for driving the delivery worker in tests: a Redis prefix of the file's own (so its queue and
 * endpoint state are its alone, and deleting "all keys" never touches another file), events written
 * straight into PostgreSQL plus their first job, and the worker as a real child process.
 */

let eventCounter = 0;

/**
 * Moves this test file onto `<run prefix>:<name>`, still under the run's prefix so global teardown
 * removes its keys. Jest gives every test file its own copy of process.env, so this stays in the file.
 */
export function useOwnRedisPrefix(name: string): string {
  const base = process.env.REDIS_PREFIX ?? 'callbacks';
  const prefix = `${base}:${name}`;
  process.env.REDIS_PREFIX = prefix;
  return prefix;
}

/** The app's sharded delivery queue (every shard, routed by account). */
export function deliveryQueueOf(app: INestApplication): DeliveryQueues {
  return app.get(DeliveryQueues, { strict: false });
}

export interface NewTestEvent {
  action: string;
  message: Record<string, unknown>;
  eventId?: string;
}

/** `count` Customer_create events, customer ids 1…count. */
export function customerEvents(count: number): NewTestEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    action: 'Customer_create',
    message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: index + 1 },
  }));
}

export interface StoredTestEvent {
  seq: string;
  accountId: number;
  eventId: string;
  action: string;
  message: Record<string, unknown>;
}

/**
 * Stores events the way ingest does (its own statement: key, event, the primary's delivery decided by
 * the account's push URL and permissions as they stand), without enqueueing.
 */
export async function insertEvents(app: INestApplication, accountId: number, events: NewTestEvent[]): Promise<StoredTestEvent[]> {
  const ids = events.map((event) => {
    eventCounter += 1;
    return event.eventId ?? `evt-${process.pid}-${Date.now().toString(36)}-${eventCounter}`;
  });
  // In statements of at most 1,000 events, as ingest's batches are: one of 20,000 would outlast the statement time-out on a busy machine.
  const rows: StoredRow[] = [];
  for (let start = 0; start < events.length; start += 1000) {
    const chunk = events.slice(start, start + 1000).map((event, index) => ({
      eventId: ids[start + index],
      accountId,
      action: event.action,
      messageText: JSON.stringify(event.message),
      permissionKey: isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null,
      test: false,
      takers: [],
    }));
    rows.push(...(await app.get(Sql).rows(STORE_EVENTS, storeEventsParams(chunk))));
  }
  const seqById = new Map(rows.filter((row) => row.kind === 'inserted').map((row) => [row.event_id, row.seq ?? '']));
  return events.map((event, index) => ({ seq: seqById.get(ids[index]) ?? '', accountId, eventId: ids[index], action: event.action, message: event.message }));
}

/**
 * Moves the primary deliveries of events to `status` by hand (a test's set-up: "this one has ended"),
 * booking the change as the service's own statements do, so the tallies stay true.
 */
export async function setPrimaryStatus(app: INestApplication, seqs: string[], status: string): Promise<void> {
  await app.get(DataSource).query(
    `WITH before AS (
       SELECT d.event_seq, d.status FROM deliveries d WHERE d.event_seq = ANY($1::bigint[]) AND d.destination_id = 'primary' FOR UPDATE
     ),
     moved AS (
       UPDATE deliveries d
          SET status = $2::varchar, next_attempt_at = NULL, updated_at = now(),
              delivered_at = CASE WHEN $2::varchar = 'delivered' THEN now() ELSE d.delivered_at END
         FROM before b WHERE d.event_seq = b.event_seq AND d.destination_id = 'primary'
       RETURNING d.event_seq, d.account_id, d.delivered_at, b.status AS from_status
     )
     INSERT INTO book_entries (account_id, created_at, from_status, to_status, delivered_at)
     SELECT m.account_id, e.created_at, m.from_status, $2::varchar, m.delivered_at FROM moved m JOIN events e ON e.seq = m.event_seq WHERE m.from_status <> $2::varchar`,
    [seqs, status],
  );
}

/** Adds the first delivery job of each event, as ingest does after storing them. */
export async function enqueueFirstAttempts(queues: DeliveryQueues, events: StoredTestEvent[], delayMs = 0): Promise<void> {
  await queues.addBulk(
    events.map((event) => ({ eventSeq: event.seq, accountId: event.accountId, series: 0, attempt: 0 })),
    delayMs,
  );
}

export async function sendEvents(app: INestApplication, accountId: number, events: NewTestEvent[]): Promise<StoredTestEvent[]> {
  const stored = await insertEvents(app, accountId, events);
  await enqueueFirstAttempts(deliveryQueueOf(app), stored);
  return stored;
}

/** A delivery's changing columns, the same in the old model's event row and the new model's delivery row. */
export interface DeliveryStateColumns {
  attempts: number;
  series: number;
  series_attempts: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  last_error: string | null;
}

export interface EventRow extends DeliveryStateColumns {
  seq: string;
  event_id: string;
  status: string;
}

/** An attempt row as the database returns it: the admin API's attempt with started_at still a Date. */
export type AttemptRecord = Omit<AttemptView, 'started_at'> & { started_at: Date };

/** Events with their primary delivery's state (CONTRACT §3: an event's status is its primary delivery's). */
export async function eventRows(app: INestApplication, eventIds: string[]): Promise<EventRow[]> {
  return app.get(DataSource).query<EventRow[]>(
    `SELECT e.seq::text AS seq, e.event_id, d.status, d.attempts, d.series, d.series_attempts, d.next_attempt_at, d.delivered_at, d.last_error
       FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
      WHERE e.event_id = ANY($1::varchar[]) ORDER BY e.seq`,
    [eventIds],
  );
}

export async function eventRow(app: INestApplication, eventId: string): Promise<EventRow> {
  const [row] = await eventRows(app, [eventId]);
  return row;
}

/** An event's attempts (every destination), request headers and bodies as the admin API shows them (rebuilt where not stored). */
export async function attemptRows(app: INestApplication, eventId: string): Promise<AttemptRecord[]> {
  const rows = await app.get(DataSource).query<(AttemptRow & { event_id: string; action: string; message_text: string; created_at: Date; erased: boolean })[]>(
    `SELECT a.destination_id, a.attempt, a.series, a.started_at, a.duration_ms, a.url, a.request_headers, a.request_body, a.encoding,
            a.response_status, a.response_headers, a.response_body, a.error,
            e.event_id, e.action, e.message::text AS message_text, e.created_at, e.erased
       FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq
      WHERE e.event_id = $1
      ORDER BY a.attempt, a.id`,
    [eventId],
  );
  const { publicUrl } = app.get<Environment>(ENVIRONMENT);
  return rows.map((row) => {
    const { destination_id: _destination, encoding: _encoding, event_id: _event, action, message_text: messageText, created_at: createdAt, erased, ...attempt } = row;
    return {
      ...attempt,
      request_headers: sentHeaders(row.request_headers, { encoding: row.encoding, startedAt: row.started_at }, eventId),
      request_body: attemptRequestBody(row, { eventId, action, messageText, createdAt, erased, publicUrl }),
    };
  });
}

/** Announces a settings change on this file's prefix (the worker listens there). */
export async function announceSettingsChange(app: INestApplication, accountId: number): Promise<void> {
  await publishSettingsChanged(app.get<RedisClient>(REDIS), app.get(RedisKeys), accountId);
}

/**
 * Deletes every key under `prefix:` (never FLUSHDB: other runs share the server) on the deployment
 * this file's settings name; on a cluster, node by node, one key at a time (keys of one UNLINK must
 * share a slot).
 */
export async function deleteKeysUnder(prefix: string): Promise<number> {
  const redis = createRedisConnection(loadEnvironment(process.env), 'blocking', 'test-cleanup');
  let deleted = 0;
  try {
    // A cluster client knows its nodes only once it has loaded the slots.
    await waitForReady(redis, 10_000);
    const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) deleted += await redis.unlink(key);
      } while (cursor !== '0');
    }
  } finally {
    await closeRedisConnection(redis);
  }
  return deleted;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the child wrote, for failure messages. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the child has exited. */
  exited: Promise<number | string>;
  /** Resolves once the worker's HTTP server listens (it consumes as soon as PostgreSQL and Redis answer). */
  started: Promise<void>;
}

/**
 * Starts the built delivery worker (`npm run build` first) as a real process with the test run's database
 * and this file's Redis prefix; `env` adds or overrides settings.
 */
export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const worker = spawnBuiltApp('delivery-worker', env);
  // No deadline of its own beyond a hang's: the test's limit bounds it.
  const started = worker.waitForOutput('listening on http://', 300_000);
  // Attach a handler so a worker that is killed on purpose before listening is no unhandled rejection.
  started.catch(() => undefined);
  return { child: worker.child, output: worker.output, exited: worker.exited.then(({ how }) => how), started };
}

/** RECORD_SQL's values for one event's delivered first attempt (the destinations' statement adds its ids before the bounds). */
export function deliveredRecordValues(seq: string, destinationId?: string): unknown[] {
  const now = new Date();
  const attempt = [[seq], [0], [1], [now], [3], ['http://127.0.0.1:9/hook'], ['{}'], ['data=x'], [200], ['{}'], ['ok'], [null]];
  const change = [[seq], [0], [0], ['delivered'], [1], [null], [now], [null], [0]];
  return destinationId === undefined ? [...attempt, ...change, seq, seq] : [...attempt, ...change, [destinationId], [destinationId], seq, seq];
}
