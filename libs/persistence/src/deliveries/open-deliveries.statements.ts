import { defineStatement } from '../statements/statement';
import { FINAL_STATUS_LIST, type HoldReason, PENDING_STATUS_LIST, PRIMARY_DESTINATION_ID } from './delivery-lifecycle';

/** A pending delivery at its step, enough for its job (deliveryStepOf). */
export interface DeliveryStepRow {
  event_seq: string;
  account_id: number;
  destination_id: string;
  series: number;
  series_attempts: number;
}

const STEP_COLUMNS = `d.event_seq::text AS event_seq, d.account_id, d.destination_id, d.series, d.series_attempts`;

/**
 * The part both the reconciler's claim and the feeder's release end with: `picked` (a CTE of open rows'
 * keys, locked) gets `set`, and the statement answers those deliveries' steps, removing the open rows
 * whose delivery ended meanwhile (they have nothing left to find).
 */
function takeOpenRows(set: string): string {
  return `
  taken AS (
    UPDATE open_deliveries o SET ${set} FROM picked
     WHERE o.event_seq = picked.event_seq AND o.destination_id = picked.destination_id
    RETURNING o.event_seq, o.destination_id
  ),
  steps AS (
    SELECT ${STEP_COLUMNS}, d.status::text IN ${PENDING_STATUS_LIST} AS pending
      FROM taken t JOIN deliveries d ON d.event_seq = t.event_seq AND d.destination_id = t.destination_id
  ),
  ended AS (
    DELETE FROM open_deliveries o USING steps s
     WHERE NOT s.pending AND o.event_seq = s.event_seq::bigint AND o.destination_id = s.destination_id
  )`;
}

/**
 * The reconciler's claim of open deliveries whose due time passed the grace period (a retry whose job
 * Redis lost, an ordered delivery never attempted): each is given a new due time (now), so it is
 * re-enqueued at most once a grace period, and workers reconciling at once claim disjoint rows (SKIP
 * LOCKED). Open rows whose delivery has ended meanwhile are removed instead.
 */
export const CLAIM_DUE_OPEN_DELIVERIES = defineStatement<{ cutoff: Date; limit: number }, DeliveryStepRow & { pending: boolean }>(
  'claim-due-open-deliveries',
  'plain',
  (p) => `
  WITH picked AS (
    SELECT event_seq, destination_id FROM open_deliveries
     WHERE held IS NULL AND due_at < ${p.cutoff}
     ORDER BY due_at
     LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED
  ),${takeOpenRows('due_at = now()')}
  SELECT * FROM steps`,
);

/**
 * One pass of the sweep for fresh deliveries (series 0, nothing attempted, no open row) whose job was
 * lost: the deliveries of up to `budget` keys after `after` (whole events: an event's deliveries are
 * never split between passes) and at most `upTo` (the grace period's start), and the last key looked
 * at. Reads the primary key's range; no index over status is needed.
 */
export const SWEEP_FRESH_DELIVERIES = defineStatement<{ after: string; upTo: string; budget: number }, DeliveryStepRow & { kind: 'fresh' | 'last' }>(
  'sweep-fresh-deliveries',
  'plain',
  (p) => `
  WITH bound AS (
    SELECT COALESCE((SELECT event_seq FROM deliveries WHERE event_seq > ${p.after}::bigint AND event_seq <= ${p.upTo}::bigint
                      ORDER BY event_seq OFFSET ${p.budget} LIMIT 1), ${p.upTo}::bigint) AS last
  )
  SELECT 'last' AS kind, last::text AS event_seq, NULL::int AS account_id, NULL AS destination_id, NULL::int AS series, NULL::int AS series_attempts FROM bound
  UNION ALL
  SELECT 'fresh', ${STEP_COLUMNS}
    FROM deliveries d, bound
   WHERE d.event_seq > ${p.after}::bigint AND d.event_seq <= bound.last
     AND d.status = 'queued' AND d.series = 0 AND d.series_attempts = 0
     AND NOT EXISTS (SELECT 1 FROM open_deliveries o WHERE o.event_seq = d.event_seq AND o.destination_id = d.destination_id)`,
);

export const READ_SWEEP = defineStatement<Record<string, never>, { position: string; cycle_floor: string | null }>(
  'read-delivery-sweep',
  'plain',
  () => `SELECT position::text AS position, cycle_floor::text AS cycle_floor FROM delivery_sweep WHERE id = 1 FOR UPDATE SKIP LOCKED`,
);

export const WRITE_SWEEP = defineStatement<{ position: string; cycleFloor: string | null }>(
  'write-delivery-sweep',
  'plain',
  (p) => `UPDATE delivery_sweep SET position = ${p.position}::bigint, cycle_floor = ${p.cycleFloor}::bigint WHERE id = 1`,
);

/** Every (reason, account, destination) with held deliveries: a loose scan of the held index, one probe per pair. */
export const HELD_DESTINATIONS = defineStatement<Record<string, never>, { held: HoldReason; account_id: number; destination_id: string }>(
  'held-destinations',
  'plain',
  () => `
  WITH RECURSIVE pairs AS (
    (SELECT held, account_id, destination_id FROM open_deliveries WHERE held IS NOT NULL
      ORDER BY held, account_id, destination_id, event_seq LIMIT 1)
    UNION ALL
    SELECT n.held, n.account_id, n.destination_id
      FROM pairs p
     CROSS JOIN LATERAL (
       SELECT held, account_id, destination_id FROM open_deliveries o
        WHERE o.held IS NOT NULL AND (o.held, o.account_id, o.destination_id) > (p.held, p.account_id, p.destination_id)
        ORDER BY held, account_id, destination_id, event_seq LIMIT 1) n
  )
  SELECT held, account_id, destination_id FROM pairs`,
);

/**
 * Releases the oldest `limit` deliveries one destination holds for `reason`, in accepted order: they
 * lose their hold and become due now (so the reconciler finds them if their job is lost), and answer
 * their steps; rows whose delivery ended meanwhile are removed.
 */
export const RELEASE_HELD = defineStatement<
  { reason: HoldReason; accountId: number; destinationId: string; limit: number },
  DeliveryStepRow & { pending: boolean }
>(
  'release-held-deliveries',
  'plain',
  (p) => `
  WITH picked AS (
    SELECT event_seq, destination_id FROM open_deliveries
     WHERE held = ${p.reason} AND account_id = ${p.accountId} AND destination_id = ${p.destinationId}
     ORDER BY event_seq
     LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED
  ),${takeOpenRows('held = NULL, due_at = now()')}
  SELECT * FROM steps ORDER BY event_seq::bigint`,
);

/** A destination's held deliveries, for gauges and views. */
export const COUNT_HELD = defineStatement<{ accountId: number; destinationId: string }, { held: HoldReason; count: number }>(
  'count-held-deliveries',
  'plain',
  (p) => `
  SELECT held, count(*)::int AS count FROM open_deliveries
   WHERE held IS NOT NULL AND account_id = ${p.accountId} AND destination_id = ${p.destinationId}
   GROUP BY held`,
);

/** The nearest open delivery of the same destination and subject on one side of a delivery, for SubjectOrder. */
export interface SubjectNeighbourRow {
  i: number;
  seq: string;
  status: string;
  next_attempt_at: Date | null;
  series_attempts: number;
  /** No other delivery of the subject is open on that side. */
  alone: boolean;
}

function subjectNeighboursText(
  p: { accountIds: string; destinationIds: string; subjects: string; seqs: string },
  side: '<' | '>',
): string {
  return `
  SELECT q.i::int AS i, n.seq::text AS seq, n.status, n.next_attempt_at, n.series_attempts, n.alone
    FROM unnest(${p.accountIds}::int[], ${p.destinationIds}::varchar[], ${p.subjects}::text[], ${p.seqs}::bigint[]) WITH ORDINALITY
         AS q(account_id, destination_id, subject, seq, i)
   CROSS JOIN LATERAL (
     SELECT s.event_seq AS seq, d.status, d.next_attempt_at, d.series_attempts, count(*) OVER () = 1 AS alone
       FROM (SELECT o.event_seq FROM open_deliveries o
              WHERE o.account_id = q.account_id AND o.destination_id = q.destination_id AND o.subject = q.subject
                AND o.event_seq ${side} q.seq
              ORDER BY o.event_seq
              LIMIT 2) s
       JOIN deliveries d ON d.event_seq = s.event_seq AND d.destination_id = q.destination_id
      WHERE d.status::text NOT IN ${FINAL_STATUS_LIST}
      ORDER BY s.event_seq
      LIMIT 1) n`;
}

interface SubjectQuestions {
  accountIds: number[];
  destinationIds: string[];
  subjects: string[];
  seqs: string[];
}

/** For each asked delivery, the earliest open delivery of its subject accepted before it (the one it waits for). */
export const SUBJECT_AHEAD = defineStatement<SubjectQuestions, SubjectNeighbourRow>('subject-ahead', 'prepared', (p) => subjectNeighboursText(p, '<'));
/** For each asked delivery, the next open delivery of its subject accepted after it (the one its end lets go). */
export const SUBJECT_NEXT = defineStatement<SubjectQuestions, SubjectNeighbourRow>('subject-next', 'prepared', (p) => subjectNeighboursText(p, '>'));

/**
 * Ends held or waiting deliveries whose deadline passed (CONTRACT §13): those held (paused, breaker,
 * re-queuing) and those waiting for a retry that is not due yet. A delivery due now may be in a worker's
 * hands: its job checks the deadline itself before any call, and a call already in flight is recorded.
 * Answers each ended delivery with its subject (ordered destinations), whose next event it releases.
 */
export const EXPIRE_OPEN_DELIVERIES = defineStatement<{ limit: number }, DeliveryStepRow & { subject: string | null }>(
  'expire-open-deliveries',
  'plain',
  (p) => `
  WITH due AS (
    SELECT event_seq, destination_id, subject FROM open_deliveries
     WHERE expires_at < now() AND (held IS NOT NULL OR due_at > now())
     ORDER BY expires_at
     LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED
  ),
  ended AS (
    UPDATE deliveries d
       SET status = 'expired', next_attempt_at = NULL, updated_at = now(),
           last_error = 'expired after ' || COALESCE(format_duration_ms(x.expire_after_ms), 'its deadline')
      FROM due, destinations x
     WHERE d.event_seq = due.event_seq AND d.destination_id = due.destination_id
       AND x.account_id = d.account_id AND x.id = d.destination_id
       AND d.status::text IN ${PENDING_STATUS_LIST}
    RETURNING d.event_seq, d.destination_id, d.account_id, d.series, d.series_attempts, due.subject
  ),
  closed AS (
    DELETE FROM open_deliveries o USING due WHERE o.event_seq = due.event_seq AND o.destination_id = due.destination_id
  ),
  booked AS (
    INSERT INTO book_entries (account_id, created_at, from_status, to_status, tallied)
    SELECT e.account_id, e.created_at, CASE WHEN x.series_attempts = 0 THEN 'queued' ELSE 'retrying' END, 'expired',
           x.destination_id = '${PRIMARY_DESTINATION_ID}'
      FROM ended x JOIN events e ON e.seq = x.event_seq
  )
  SELECT event_seq::text AS event_seq, account_id, destination_id, series, series_attempts, subject FROM ended`,
);

/**
 * A deleted destination's deliveries that wait (for a retry, a hold, their subject's turn) end `failed`
 * at once (CONTRACT §11); one whose job is in the queue ends the same way when the job runs. Answers
 * how many ended.
 */
export const END_DESTINATION_DELIVERIES = defineStatement<{ accountId: number; destinationId: string; why: string }, { ended: number }>(
  'end-destination-deliveries',
  'plain',
  (p) => `
  WITH waiting AS (
    DELETE FROM open_deliveries WHERE account_id = ${p.accountId} AND destination_id = ${p.destinationId}
    RETURNING event_seq, destination_id
  ),
  ended AS (
    UPDATE deliveries d SET status = 'failed', last_error = ${p.why}, next_attempt_at = NULL, updated_at = now()
      FROM waiting w
     WHERE d.event_seq = w.event_seq AND d.destination_id = w.destination_id AND d.status::text IN ${PENDING_STATUS_LIST}
    RETURNING 1
  )
  SELECT count(*)::int AS ended FROM ended`,
);
