import { type DestinationStepRow, RESTART_DESTINATION_SERIES, RESTARTED_DESTINATION_COLUMNS } from '@app/persistence';
import type { EventFilter } from '@app/payloads';
import { addEventFilter } from '../events/event-filter';
import { Conditions } from '../sql-conditions';
import { REDELIVERY_CHUNK } from './restart-series';

/** Where a bulk redelivery's walk through destination deliveries stands: below this (event_seq, destination_id). */
export interface DestinationCursor {
  seq: string;
  destinationId: string;
}

/**
 * The deliveries to the other destinations a bulk redelivery takes (CONTRACT §11): in the task's
 * status, to a destination not deleted, of an event the rest of the filter matches (action, times,
 * message). The event's own fields are checked in a subquery, where the filter's unqualified
 * columns are the event's. An account's failed deliveries come from destination_deliveries_failed_idx.
 */
function destinationDeliveryConditions(filter: EventFilter): Conditions {
  const conditions = new Conditions();
  conditions.add((p) => `d.status = ${p}`, filter.status ?? 'failed');
  if (filter.account_id !== undefined) conditions.add((p) => `d.account_id = ${p}`, filter.account_id);
  conditions.also('EXISTS (SELECT 1 FROM destinations dst WHERE dst.id = d.destination_id AND dst.deleted_at IS NULL)');
  const ofEvent = new Conditions(conditions.parameters);
  addEventFilter(ofEvent, { ...filter, account_id: undefined, status: undefined });
  const eventClauses = ofEvent.joined();
  if (eventClauses !== null) conditions.also(`EXISTS (SELECT 1 FROM events WHERE events.seq = d.event_seq AND ${eventClauses})`);
  return conditions;
}

/** How many destination deliveries a new task will restart, and the newest one's event seq. */
export function countDestinationMatches(filter: EventFilter): { sql: string; parameters: unknown[] } {
  const conditions = destinationDeliveryConditions(filter);
  return {
    sql: `SELECT count(*)::int AS count, max(d.event_seq)::text AS upper FROM destination_deliveries d ${conditions.where()}`,
    parameters: conditions.parameters,
  };
}

/**
 * The next chunk, newest first, below `cursor`, restarted in one statement (a new series each, as a
 * single redelivery does); rows are locked in the order they are read, like the events phase. The
 * rows come back in that order, so the last one is where the next chunk starts below (in the
 * database's own ordering of ids).
 */
export function restartDestinationChunk(filter: EventFilter, upperSeq: string, cursor: DestinationCursor | null): { sql: string; parameters: unknown[] } {
  const conditions = destinationDeliveryConditions(filter);
  conditions.add((p) => `d.event_seq <= ${p}::bigint`, upperSeq);
  if (cursor !== null) {
    const seq = conditions.next(cursor.seq);
    conditions.add((p) => `(d.event_seq, d.destination_id) < (${seq}::bigint, ${p}::text)`, cursor.destinationId);
  }
  const limit = conditions.next(REDELIVERY_CHUNK);
  return {
    sql: `WITH picked AS (
            SELECT d.event_seq, d.destination_id FROM destination_deliveries d ${conditions.where()}
             ORDER BY d.event_seq DESC, d.destination_id DESC LIMIT ${limit} FOR UPDATE OF d
          )
          , restarted AS (
            UPDATE destination_deliveries d SET ${RESTART_DESTINATION_SERIES}
              FROM picked
             WHERE d.event_seq = picked.event_seq AND d.destination_id = picked.destination_id
            RETURNING ${RESTARTED_DESTINATION_COLUMNS}
          )
          SELECT * FROM restarted ORDER BY event_seq::bigint DESC, destination_id DESC`,
    parameters: conditions.parameters,
  };
}

/** Where the next chunk starts below: the last row of one (restartDestinationChunk answers them newest first). */
export function cursorAfter(rows: readonly DestinationStepRow[]): DestinationCursor | null {
  const last = rows.at(-1);
  return last ? { seq: last.event_seq, destinationId: last.destination_id } : null;
}
