import { books, defineStatement, PRIMARY_DESTINATION_ID } from '@app/persistence';

/** The account's newest events, up to `limit` (events_account_seq_idx). */
export const ACCOUNT_EVENT_SEQS = defineStatement<{ accountId: number; limit: number }, { seq: string }>(
  'deletion-account-events',
  'plain',
  (p) => `SELECT seq::text AS seq FROM events WHERE account_id = ${p.accountId} ORDER BY seq DESC LIMIT ${p.limit}`,
);

/**
 * Milliseconds until the account's row may go: ACCOUNT_DELETION_SETTLE after it was marked deleted, when
 * no ingest statement that saw it live can still commit an event of it (events carry no foreign key to
 * the account). No row: nothing left to wait for.
 */
export const ACCOUNT_SETTLES_IN = defineStatement<{ accountId: number; settleMs: number }, { settles_in_ms: number }>(
  'deletion-account-settles-in',
  'plain',
  (p) => `SELECT GREATEST(0, EXTRACT(EPOCH FROM deleted_at + ${p.settleMs}::float8 * interval '1 millisecond' - now()) * 1000)::float8 AS settles_in_ms
            FROM accounts WHERE id = ${p.accountId}`,
);

/**
 * Deletes the events' deliveries (every destination) and open rows, and books each primary delivery's
 * status out of the event tallies, as retention's trim does (the tallies count an event by its primary
 * delivery, and nothing else subtracts a deleted event; books.bookedOutSql). The delivery as deleted is
 * its latest version: a worker's record that committed first is counted out with the status it wrote, and
 * one that waited finds no row and records nothing. The events are still there to give their acceptance time.
 */
export const DELETE_DELIVERIES = defineStatement<{ seqs: string[] }>(
  'deletion-deliveries',
  'plain',
  (p) => `
  WITH removed AS (
    DELETE FROM deliveries WHERE event_seq = ANY(${p.seqs}::bigint[])
    RETURNING event_seq, destination_id, account_id, status, first_status, delivered_at
  ),
  closed AS (
    DELETE FROM open_deliveries WHERE event_seq = ANY(${p.seqs}::bigint[])
  ),
  primaries AS (
    SELECT r.account_id, e.created_at, e.seq, r.first_status, r.status, r.delivered_at
      FROM removed r JOIN events e ON e.seq = r.event_seq AND e.seq = ANY(${p.seqs}::bigint[])
     WHERE r.destination_id = '${PRIMARY_DESTINATION_ID}'
  )
  ${books.bookedOutSql('primaries')}`,
);

/** The events' attempts, any destination (partitioned by the event's seq: the list prunes them to the events' days). */
export const DELETE_ATTEMPTS = defineStatement<{ seqs: string[] }>(
  'deletion-attempts',
  'plain',
  (p) => `DELETE FROM delivery_attempts WHERE event_seq = ANY(${p.seqs}::bigint[])`,
);

export const DELETE_EVENTS = defineStatement<{ seqs: string[]; accountId: number }>(
  'deletion-events',
  'plain',
  (p) => `
  WITH removed AS (
    DELETE FROM events WHERE seq = ANY(${p.seqs}::bigint[]) RETURNING seq, event_id
  )
  DELETE FROM event_keys k USING removed r
   WHERE k.event_id = r.event_id AND k.event_seq = r.seq AND k.account_id = ${p.accountId}`,
);
