import { defineStatement, PENDING_STATUS_LIST, PRIMARY_DESTINATION_ID } from '@app/persistence';

/** What an erased event's pending delivery ends with (CONTRACT §12). */
export const ERASED_ERROR = 'erased';

/** An erasure task as its runner reads it each step. */
export interface ErasureTaskRow {
  /** null once its first pass is over (the log of erasures keeps no identifier). */
  subject: string | null;
  account_id: number | null;
  upper_seq: string;
  events_erased: number;
  /** How long until its second pass is due (≤ 0: due), once the first pass is over. */
  second_pass_in_ms: number | null;
}

/**
 * The task; `settleMs` is how long after its first pass the second one is due. The first pass's end is
 * kept in finished_at while the task still runs (done sets it again).
 */
export const READ_ERASURE_TASK = defineStatement<{ id: string; settleMs: number }, ErasureTaskRow>(
  'erasure-task',
  'plain',
  (p) => `
  SELECT subject, account_id, upper_seq::text AS upper_seq, events_erased,
         CASE WHEN subject IS NULL AND finished_at IS NOT NULL
              THEN (EXTRACT(EPOCH FROM finished_at + ${p.settleMs}::int * interval '1 millisecond' - now()) * 1000)::float8 END AS second_pass_in_ms
    FROM erasure_tasks WHERE id = ${p.id}::uuid`,
);

/** Up to `limit` events of the subject (and account) accepted before the erasure, through events_subject_idx, locked for the step. */
export const SUBJECT_EVENT_SEQS = defineStatement<{ subject: string; upperSeq: string; accountId: number | null; limit: number }, { seq: string }>(
  'erasure-subject-events',
  'plain',
  (p) => `
  SELECT seq::text AS seq FROM events
   WHERE callback_subject(action, message) = ${p.subject} AND seq <= ${p.upperSeq}::bigint
     AND (${p.accountId}::int IS NULL OR account_id = ${p.accountId}::int)
   ORDER BY seq
   LIMIT ${p.limit}
     FOR UPDATE`,
);

/**
 * Ends every pending delivery of the events, whatever its destination: `failed`, `erased`, its open row
 * closed, the primary's change booked (the tallies count an event by its primary delivery). Rows are
 * locked first, in key order: a worker recording a call of one of them either committed before (its
 * delivery is no longer pending and its attempt is there for the next statement to clear) or waits and
 * then finds the delivery final, and records nothing.
 */
export const END_ERASED_DELIVERIES = defineStatement<{ seqs: string[] }, { ended: number }>(
  'erasure-end-deliveries',
  'plain',
  (p) => `
  WITH pending AS (
    SELECT event_seq, destination_id, status FROM deliveries
     WHERE event_seq = ANY(${p.seqs}::bigint[]) AND status IN ${PENDING_STATUS_LIST}
     ORDER BY event_seq, destination_id
       FOR UPDATE
  ),
  ended AS (
    UPDATE deliveries d
       SET status = 'failed', last_error = '${ERASED_ERROR}', next_attempt_at = NULL, updated_at = now()
      FROM pending p
     WHERE d.event_seq = ANY(${p.seqs}::bigint[]) AND d.event_seq = p.event_seq AND d.destination_id = p.destination_id
    RETURNING d.event_seq, d.destination_id, d.account_id, p.status AS from_status
  ),
  closed AS (
    DELETE FROM open_deliveries o USING ended x WHERE o.event_seq = x.event_seq AND o.destination_id = x.destination_id
  ),
  booked AS (
    INSERT INTO book_entries (account_id, created_at, from_status, to_status)
    SELECT x.account_id, e.created_at, x.from_status, 'failed'
      FROM ended x JOIN events e ON e.seq = x.event_seq AND e.seq = ANY(${p.seqs}::bigint[])
     WHERE x.destination_id = '${PRIMARY_DESTINATION_ID}'
  )
  SELECT count(*)::int AS ended FROM ended`,
);

/**
 * Empties the bodies of every attempt of the events, any destination (the list prunes the partitions
 * to the events' days). An attempt whose body was not stored shows none once its event is erased; the
 * empty string stored says the body is gone. Rows already empty are left alone (the second pass).
 */
export const CLEAR_ATTEMPT_BODIES = defineStatement<{ seqs: string[] }, { cleared: number }>(
  'erasure-clear-attempts',
  'plain',
  (p) => `
  WITH cleared AS (
    UPDATE delivery_attempts SET request_body = '', response_body = NULL
     WHERE event_seq = ANY(${p.seqs}::bigint[]) AND (request_body IS DISTINCT FROM '' OR response_body IS NOT NULL)
    RETURNING 1
  )
  SELECT count(*)::int AS cleared FROM cleared`,
);

/** The message becomes the JSON null: its subject is then null and the row leaves events_subject_idx and the search index. */
export const ERASE_EVENTS = defineStatement<{ seqs: string[] }>(
  'erasure-erase-events',
  'plain',
  (p) => `UPDATE events SET message = 'null'::json, erased = true WHERE seq = ANY(${p.seqs}::bigint[])`,
);

/**
 * The second pass when the seqs of the first are not known (its runner stopped): the erased events of
 * the task's scope, walked newest first below `below`, `limit` events looked at per step.
 */
export const ERASED_EVENTS_BELOW = defineStatement<
  { below: string; accountId: number | null; limit: number },
  { seq: string; erased: boolean }
>(
  'erasure-erased-events-below',
  'plain',
  (p) => `
  SELECT seq::text AS seq, erased FROM events
   WHERE seq < ${p.below}::bigint AND (${p.accountId}::int IS NULL OR account_id = ${p.accountId}::int)
   ORDER BY seq DESC
   LIMIT ${p.limit}`,
);
