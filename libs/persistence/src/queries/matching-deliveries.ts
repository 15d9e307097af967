import type { EventFilter } from '@app/payloads';
import { addEventFilter } from './event-filter';
import { Conditions } from './sql-conditions';

/** Deliveries restarted per chunk (and jobs per addBulk) in a bulk redelivery: bounded locks, bounded Redis pipelines. */
export const REDELIVERY_CHUNK = 1000;

/** Where a bulk redelivery's walk stands: below this (event_seq, destination_id), newest first. */
export interface DeliveryCursor {
  seq: string;
  destinationId: string;
}

/**
 * The deliveries a bulk redelivery takes (CONTRACT §3, §10, §11): of an event the filter matches
 * (account, action, times, message search) to a destination not deleted, in the task's status, every
 * destination alike. The event's filter applies to `events` (its unqualified columns are the event's);
 * the status is the delivery's, read beside it: there is no index over delivery statuses, so an
 * account's range of events is walked and each one's deliveries looked at by their key.
 */
function matching(filter: EventFilter, upperSeq: string | null): { conditions: Conditions; from: string } {
  const conditions = new Conditions();
  addEventFilter(conditions, { ...filter, status: undefined });
  if (upperSeq !== null) conditions.add((p) => `seq <= ${p}::bigint`, upperSeq);
  const status = conditions.next(filter.status ?? 'failed');
  const from = `events
    CROSS JOIN LATERAL (
      SELECT d.destination_id FROM deliveries d
        JOIN destinations x ON x.account_id = d.account_id AND x.id = d.destination_id AND x.deleted_at IS NULL
       WHERE d.event_seq = events.seq AND d.status = ${status}) m`;
  return { conditions, from };
}

/** How many deliveries match, and the newest matching event's seq (the task's upper bound: later events are not part of it). */
export function countMatching(filter: EventFilter): { sql: string; parameters: unknown[] } {
  const { conditions, from } = matching(filter, null);
  return { sql: `SELECT count(*)::int AS count, max(seq)::text AS upper FROM ${from} ${conditions.where()}`, parameters: conditions.parameters };
}

/** The next `limit` matching deliveries below `cursor`, newest first. */
export function nextMatching(filter: EventFilter, upperSeq: string, cursor: DeliveryCursor | null, limit: number): { sql: string; parameters: unknown[] } {
  const { conditions, from } = matching(filter, upperSeq);
  if (cursor) {
    const seq = conditions.next(cursor.seq);
    const destination = conditions.next(cursor.destinationId);
    conditions.also(`(seq, m.destination_id) < (${seq}::bigint, ${destination}::varchar)`);
  }
  const bound = conditions.next(limit);
  return {
    sql: `SELECT seq::text AS event_seq, m.destination_id FROM ${from} ${conditions.where()} ORDER BY seq DESC, m.destination_id DESC LIMIT ${bound}`,
    parameters: conditions.parameters,
  };
}
