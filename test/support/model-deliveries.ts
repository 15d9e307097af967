import type { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { type EventStatus, type HoldReason, PENDING_EVENT_STATUSES, PRIMARY_DESTINATION_ID } from '@app/persistence/testing';
import type { EventRow } from './worker-process';

/**
 * The rows of the delivery model (docs/delivery-model.md) as suites read and write them directly: an
 * event's status, attempts and schedule are its primary delivery's (`deliveries`, destination
 * `primary`); the push URL and its options are the account's `primary` row in `destinations`; a
 * delivery that waits (a retry not due, a hold) has its `open_deliveries` row. For suites that seed
 * exact states, or read what the admin API reports, without going through ingest and a worker.
 */

/** TypeORM's DataSource (an app's) or a pg Client (an IsolatedNamespace's `db`). */
export type ModelDatabase = DataSource | Client;

function isDataSource(db: ModelDatabase): db is DataSource {
  return 'createQueryRunner' in db;
}

/** Rows of a SELECT or of a statement with RETURNING, whichever client runs it. */
async function rowsOf<T>(db: ModelDatabase, sql: string, parameters: unknown[]): Promise<T[]> {
  if (isDataSource(db)) return db.query<T[]>(sql, parameters);
  return (await db.query(sql, parameters)).rows as T[];
}

/** An event with its primary delivery's state, as the admin API reports the event's. */
export interface PrimaryDeliveryRow extends EventRow {
  account_id: number;
  action: string;
  /** Why it waits without a job (its open row's hold), or null. */
  held: HoldReason | null;
}

const PRIMARY_DELIVERY_SELECT = `
  SELECT e.seq::text AS seq, e.event_id, e.account_id, e.action, d.status, d.attempts, d.series, d.series_attempts,
         d.next_attempt_at, d.delivered_at, d.last_error, o.held
    FROM events e
    JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = '${PRIMARY_DESTINATION_ID}'
    LEFT JOIN open_deliveries o ON o.event_seq = d.event_seq AND o.destination_id = d.destination_id`;

/** The primary deliveries of these events (by event id), in seq order. */
export async function primaryDeliveries(db: ModelDatabase, eventIds: string[]): Promise<PrimaryDeliveryRow[]> {
  return rowsOf<PrimaryDeliveryRow>(db, `${PRIMARY_DELIVERY_SELECT} WHERE e.event_id = ANY($1::varchar[]) ORDER BY e.seq`, [eventIds]);
}

/** The primary delivery of one event (undefined: no such event). */
export async function primaryDeliveryOf(db: ModelDatabase, eventId: string): Promise<PrimaryDeliveryRow | undefined> {
  return (await primaryDeliveries(db, [eventId]))[0];
}

/** The primary deliveries of every event of an account, in seq order. */
export async function primaryDeliveriesOfAccount(db: ModelDatabase, accountId: number): Promise<PrimaryDeliveryRow[]> {
  return rowsOf<PrimaryDeliveryRow>(db, `${PRIMARY_DELIVERY_SELECT} WHERE e.account_id = $1 ORDER BY e.seq`, [accountId]);
}

/** The account's `primary` destination row: its push URL and the options, state and secrets that moved there. */
export interface PrimaryDestinationRow {
  target: string | null;
  target_shown: string | null;
  content_type: string;
  ordering: string;
  max_per_second: number | null;
  paused: boolean;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  signing_secret: string;
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
  version: number;
}

export async function primaryDestinationOf(db: ModelDatabase, accountId: number): Promise<PrimaryDestinationRow | undefined> {
  const [row] = await rowsOf<PrimaryDestinationRow>(
    db,
    `SELECT target, target_shown, content_type, ordering, max_per_second, paused, failing_since, disabled_at, disabled_reason,
            signing_secret, previous_signing_secret, previous_secret_expires_at, version
       FROM destinations WHERE account_id = $1 AND id = '${PRIMARY_DESTINATION_ID}'`,
    [accountId],
  );
  return row;
}

/** Columns of the primary's row a suite may set directly (what the worker or an operator's statement would write). */
export type PrimaryDestinationChange = Partial<Pick<PrimaryDestinationRow, 'ordering' | 'max_per_second' | 'paused' | 'failing_since' | 'disabled_at' | 'disabled_reason'>>;

/**
 * Sets columns of the account's primary row; `bumpVersion` as the settings code does for a change the
 * workers must learn of (announce it on the settings channel too).
 */
export async function updatePrimaryDestination(db: ModelDatabase, accountId: number, change: PrimaryDestinationChange, options: { bumpVersion?: boolean } = {}): Promise<void> {
  const columns = Object.keys(change) as (keyof PrimaryDestinationChange)[];
  const assignments = columns.map((column, index) => `${column} = $${index + 2}`);
  if (options.bumpVersion) assignments.push('version = version + 1');
  if (assignments.length === 0) return;
  // A SELECT around the UPDATE: TypeORM answers a bare UPDATE with [rows, count] rather than its rows.
  const [{ updated }] = await rowsOf<{ updated: number }>(
    db,
    `WITH changed AS (
       UPDATE destinations SET ${assignments.join(', ')}, updated_at = now() WHERE account_id = $1 AND id = '${PRIMARY_DESTINATION_ID}' RETURNING 1
     )
     SELECT count(*)::int AS updated FROM changed`,
    [accountId, ...columns.map((column) => change[column])],
  );
  if (updated !== 1) throw new Error(`account ${accountId} has no primary destination`);
}

/** An event to write as ingest's statement writes it (its key, the event); `createdAt` defaults to now. */
export interface EventSeed {
  eventId: string;
  action: string;
  message: unknown;
  createdAt?: Date | string;
}

/** Events of one account, their keys claimed, in the given order (seqs ascending); answers each one's seq. */
export async function insertEventRows(db: ModelDatabase, accountId: number, events: EventSeed[]): Promise<{ seq: string; event_id: string }[]> {
  return rowsOf<{ seq: string; event_id: string }>(
    db,
    `WITH input AS (
       SELECT * FROM unnest($2::varchar[], $3::varchar[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS t(event_id, action, message, created_at, ord)
     ),
     keyed AS (
       INSERT INTO event_keys (event_id, account_id, event_seq)
       SELECT event_id, $1, next_event_seq() FROM (SELECT * FROM input ORDER BY ord) AS in_order
       RETURNING event_id, event_seq
     )
     INSERT INTO events (seq, event_id, account_id, action, message, created_at)
     SELECT k.event_seq, i.event_id, $1, i.action, i.message::json, COALESCE(i.created_at, now())
       FROM keyed k JOIN input i USING (event_id)
     RETURNING seq::text AS seq, event_id`,
    [
      accountId,
      events.map((event) => event.eventId),
      events.map((event) => event.action),
      events.map((event) => JSON.stringify(event.message)),
      events.map((event) => (event.createdAt === undefined ? null : new Date(event.createdAt).toISOString())),
    ],
  ).then((rows) => rows.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1)));
}

/** One delivery's state, as ingest stored it and the worker (or an operator) moved it on. */
export interface DeliverySeed {
  seq: string;
  destinationId: string;
  accountId: number;
  status: EventStatus;
  attempts?: number;
  series?: number;
  seriesAttempts?: number;
  /** When its next attempt is due (pending deliveries; default now, but none while held). */
  nextAttemptAt?: Date | null;
  deliveredAt?: Date | null;
  lastError?: string | null;
  /** A pending delivery held without a job (its destination paused, its breaker open). */
  held?: HoldReason | null;
}

/**
 * Writes deliveries in the given states with what goes with them: a pending one's open row (due at its
 * next attempt, or held), and for the primary the book entry of its status (so the stats keep agreeing
 * with the rows). Many rows, one statement.
 */
export async function insertDeliveryRows(db: ModelDatabase, deliveries: DeliverySeed[]): Promise<void> {
  if (deliveries.length === 0) return;
  const pending = (delivery: DeliverySeed): boolean => (PENDING_EVENT_STATUSES as readonly string[]).includes(delivery.status);
  const nextAttemptAt = (delivery: DeliverySeed): string | null => {
    if (delivery.nextAttemptAt !== undefined) return delivery.nextAttemptAt === null ? null : delivery.nextAttemptAt.toISOString();
    return pending(delivery) && !delivery.held ? new Date().toISOString() : null;
  };
  await rowsOf(
    db,
    `WITH input AS (
       SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::int[], $4::varchar[], $5::int[], $6::int[], $7::int[], $8::timestamptz[],
                            $9::timestamptz[], $10::text[], $11::varchar[], $12::bool[])
              AS t(event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at, delivered_at, last_error, held, pending)
     ),
     stored AS (
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at, delivered_at, last_error)
       SELECT event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at, delivered_at, last_error FROM input
       RETURNING event_seq
     ),
     opened AS (
       INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at, held)
       SELECT event_seq, destination_id, account_id, CASE WHEN held IS NULL THEN COALESCE(next_attempt_at, now()) END, held FROM input WHERE pending
       RETURNING event_seq
     ),
     booked AS (
       INSERT INTO book_entries (account_id, created_at, to_status, delivered_at)
       SELECT i.account_id, e.created_at, i.status, i.delivered_at
         FROM input i JOIN events e ON e.seq = i.event_seq
        WHERE i.destination_id = '${PRIMARY_DESTINATION_ID}'
       RETURNING account_id
     )
     SELECT (SELECT count(*) FROM stored) AS stored, (SELECT count(*) FROM opened) AS opened, (SELECT count(*) FROM booked) AS booked`,
    [
      deliveries.map((delivery) => delivery.seq),
      deliveries.map((delivery) => delivery.destinationId),
      deliveries.map((delivery) => delivery.accountId),
      deliveries.map((delivery) => delivery.status),
      deliveries.map((delivery) => delivery.attempts ?? 0),
      deliveries.map((delivery) => delivery.series ?? 0),
      deliveries.map((delivery) => delivery.seriesAttempts ?? 0),
      deliveries.map(nextAttemptAt),
      deliveries.map((delivery) => delivery.deliveredAt?.toISOString() ?? (delivery.status === 'delivered' ? new Date().toISOString() : null)),
      deliveries.map((delivery) => delivery.lastError ?? null),
      deliveries.map((delivery) => (pending(delivery) ? (delivery.held ?? null) : null)),
      deliveries.map(pending),
    ],
  );
}

/**
 * Events with their primary delivery in one state, keys claimed and books kept: what ingest and a
 * worker would have left behind. Answers them in seq order.
 */
export async function insertEventsWithPrimary(
  db: ModelDatabase,
  accountId: number,
  events: EventSeed[],
  delivery: Omit<DeliverySeed, 'seq' | 'destinationId' | 'accountId'>,
): Promise<{ seq: string; event_id: string }[]> {
  const stored = await insertEventRows(db, accountId, events);
  await insertDeliveryRows(
    db,
    stored.map((event) => ({ ...delivery, seq: event.seq, destinationId: PRIMARY_DESTINATION_ID, accountId })),
  );
  return stored;
}
