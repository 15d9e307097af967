import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isEventAction, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { Sql, type StepOutcome, STORE_EVENTS, storeEventsParams } from '@app/persistence/testing';
import type { NewTestEvent, StoredTestEvent } from './worker-process';

/**
 * Deliveries to any destination, the primary included, as the delivery model stores them
 * (docs/delivery-model.md): written by ingest's own statement, read from `deliveries`.
 */

let counter = 0;

export interface StoredWithDeliveries extends StoredTestEvent {
  /** The destinations whose delivery of it was stored `queued` (each needs its first job). */
  queued: string[];
}

/**
 * Stores events through STORE_EVENTS as ingest does when `takers` are the extra destinations whose
 * actions and filter take them (ingest's DestinationDirectory decides that before the statement); the
 * statement decides the primary's delivery by its target and the account's permissions. No job is added.
 */
export async function storeEventsFor(app: INestApplication, accountId: number, events: NewTestEvent[], takers: string[]): Promise<StoredWithDeliveries[]> {
  const ids = events.map((event) => {
    counter += 1;
    return event.eventId ?? `dlv-${process.pid}-${Date.now().toString(36)}-${counter}`;
  });
  const rows = await app.get(Sql).rows(
    STORE_EVENTS,
    storeEventsParams(
      events.map((event, index) => ({
        eventId: ids[index],
        accountId,
        action: event.action,
        messageText: JSON.stringify(event.message),
        permissionKey: isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null,
        test: false,
        takers,
      })),
    ),
  );
  const seqById = new Map(rows.filter((row) => row.kind === 'inserted').map((row) => [row.event_id, row.seq ?? '']));
  return events.map((event, index) => {
    const seq = seqById.get(ids[index]);
    if (seq === undefined) throw new Error(`event ${ids[index]} was not stored`);
    const queued = rows.filter((row) => row.kind === 'queued' && row.seq === seq).map((row) => row.destination_id ?? '');
    return { seq, accountId, eventId: ids[index], action: event.action, message: event.message, queued };
  });
}

export interface DeliveryRow {
  seq: string;
  destination_id: string;
  status: string;
  attempts: number;
  series: number;
  series_attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
}

/** The deliveries of these events to one destination, in seq order. */
export async function deliveryRowsOf(app: INestApplication, seqs: string[], destinationId: string): Promise<DeliveryRow[]> {
  return app.get(DataSource).query<DeliveryRow[]>(
    `SELECT event_seq::text AS seq, destination_id, status, attempts, series, series_attempts, next_attempt_at, last_error
       FROM deliveries WHERE event_seq = ANY($1::bigint[]) AND destination_id = $2 ORDER BY event_seq`,
    [seqs, destinationId],
  );
}

/** A delivery's first step to the primary delivered (200) at `deliveredAt`, as the worker's recorder writes it. */
export function deliveredOutcome(seq: string, accountId: number, createdAt: string | Date, deliveredAt = new Date()): StepOutcome {
  return {
    seq,
    destinationId: 'primary',
    accountId,
    series: 0,
    seriesAttempts: 0,
    createdAt,
    status: 'delivered',
    nextAttemptAt: null,
    deliveredAt,
    lastError: null,
    attempt: {
      attempt: 1,
      startedAt: new Date(),
      durationMs: 3,
      url: 'http://127.0.0.1:9/hook',
      requestHeaders: {},
      encoding: 'json',
      responseStatus: 200,
      responseHeaders: {},
      responseBody: 'ok',
      error: null,
    },
    open: { kind: 'unchanged' },
  };
}
