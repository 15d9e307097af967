import type { DeliveryEncoding } from '@app/payloads';
import { defineStatement, type EventStatus, PRIMARY_DESTINATION_ID } from '@app/persistence';

/** An event with its primary delivery, as the list and the detail read it. */
export interface EventWithPrimaryRow {
  seq: string;
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  last_error: string | null;
  erased: boolean;
}

/** The list's columns over `events` and its primary delivery `d` (AdminEventsService.list composes the rest). */
export const LISTED_EVENT_COLUMNS = `events.seq::text AS seq, events.event_id, events.account_id, events.action, d.status, d.attempts,
         events.created_at, d.delivered_at, d.last_error, events.erased`;

/**
 * Each event with its primary delivery, probed by key for each event the walk reaches. OFFSET 0 keeps
 * the probe a subquery of its own: joined plainly, the planner may walk the deliveries' key backwards
 * for a status instead, which neither the account nor since/until (seq bounds on events) would bound.
 */
export const WITH_PRIMARY_DELIVERY = `events CROSS JOIN LATERAL (
           SELECT p.status, p.attempts, p.delivered_at, p.last_error FROM deliveries p
            WHERE p.event_seq = events.seq AND p.destination_id = '${PRIMARY_DESTINATION_ID}' OFFSET 0) d`;

export interface EventDetailRow extends EventWithPrimaryRow {
  message: Record<string, unknown> | null;
  /** The message as stored (json keeps the sender's bytes): request bodies are rebuilt from it. */
  message_text: string;
  series: number;
  updated_at: Date;
  next_attempt_at: Date | null;
}

/**
 * One event and its primary delivery; `accountId` null for any account. event_keys gives the seq, so
 * both lookups prune to one partition instead of probing each day's index.
 */
export const EVENT_DETAIL = defineStatement<{ eventId: string; accountId: number | null }, EventDetailRow>(
  'admin-event-detail',
  'plain',
  (p) => `
  SELECT e.seq::text AS seq, e.event_id, e.account_id, e.action, e.message, e.message::text AS message_text, e.created_at, e.erased,
         d.status, d.attempts, d.series, d.updated_at, d.delivered_at, d.next_attempt_at, d.last_error
    FROM events e
    JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = '${PRIMARY_DESTINATION_ID}'
   WHERE e.seq = (SELECT event_seq FROM event_keys WHERE event_id = ${p.eventId}) AND e.event_id = ${p.eventId}
     AND (${p.accountId}::int IS NULL OR e.account_id = ${p.accountId}::int)`,
);

export interface AttemptRow {
  destination_id: string;
  attempt: number;
  series: number;
  started_at: Date;
  duration_ms: number;
  url: string;
  request_headers: Record<string, string>;
  /** null: not stored, rebuilt from the event's message and `encoding` (docs/delivery-model.md). */
  request_body: string | null;
  encoding: DeliveryEncoding | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  error: string | null;
}

/** Every attempt of an event, any destination, in the order they were made. */
export const EVENT_ATTEMPTS = defineStatement<{ seq: string }, AttemptRow>(
  'admin-event-attempts',
  'plain',
  (p) => `
  SELECT destination_id, attempt, series, started_at, duration_ms, url, request_headers, request_body, encoding,
         response_status, response_headers, response_body, error
    FROM delivery_attempts
   WHERE event_seq = ${p.seq}::bigint
   ORDER BY attempt, id`,
);

/** Every delivery of an event: the primary first, then in the order the destinations were added (as their lists show them). */
export const EVENT_DELIVERIES = defineStatement<{ seq: string }, { destination_id: string; status: EventStatus; last_error: string | null }>(
  'admin-event-deliveries',
  'plain',
  (p) => `
  SELECT d.destination_id, d.status, d.last_error
    FROM deliveries d
    LEFT JOIN destinations x ON x.account_id = d.account_id AND x.id = d.destination_id
   WHERE d.event_seq = ${p.seq}::bigint
   ORDER BY d.destination_id <> '${PRIMARY_DESTINATION_ID}', x.created_at NULLS LAST, d.destination_id`,
);
