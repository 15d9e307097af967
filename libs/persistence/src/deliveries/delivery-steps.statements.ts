import { defineStatement } from '../statements/statement';
import { FINAL_STATUS_LIST, type EventStatus, type HoldReason, PRIMARY_DESTINATION_ID } from './delivery-lifecycle';
import { latencyBucketFloorSql, latencyBucketSql } from '../stats/delivery-rollup';

/** A delivery and its event as one step of the worker reads them. */
export interface LoadedDeliveryRow {
  seq: string;
  destination_id: string;
  account_id: number;
  status: EventStatus;
  attempts: number;
  series: number;
  series_attempts: number;
  expires_at: Date | null;
  event_id: string;
  action: string;
  message_text: string;
  created_at: Date;
  /** created_at as PostgreSQL writes it (microseconds): the books bucket latencies from it exactly as from the row. */
  accepted_at: string;
  test: boolean;
  erased: boolean;
  /** The delivery has an open row (docs/delivery-model.md): its end removes it. */
  has_open: boolean;
  /** Its subject, when its destination orders by subject (from the open row). */
  subject: string | null;
}

interface LoadParams {
  seqs: string[];
  destinationIds: string[];
  lowSeq: string;
  highSeq: string;
}

/**
 * The deliveries of a batch of jobs with their events, by primary key. Under one kept plan: the batch's
 * lowest and highest seq, scalars, let the executor drop the other days at start, which an array of
 * keys cannot.
 */
export const LOAD_DELIVERIES = defineStatement<LoadParams, LoadedDeliveryRow>(
  'delivery-load',
  'generic',
  (p) => `
  SELECT d.event_seq::text AS seq, d.destination_id, d.account_id, d.status, d.attempts, d.series, d.series_attempts, d.expires_at,
         e.event_id, e.action, e.message::text AS message_text, e.created_at, e.created_at::text AS accepted_at, e.test, e.erased,
         o.event_seq IS NOT NULL AS has_open, o.subject
    FROM unnest(${p.seqs}::bigint[], ${p.destinationIds}::varchar[]) AS k(seq, destination_id)
    JOIN deliveries d ON d.event_seq = k.seq AND d.destination_id = k.destination_id
                     AND d.event_seq BETWEEN ${p.lowSeq}::bigint AND ${p.highSeq}::bigint
    JOIN events e ON e.seq = d.event_seq AND e.seq BETWEEN ${p.lowSeq}::bigint AND ${p.highSeq}::bigint
    LEFT JOIN open_deliveries o ON o.event_seq = d.event_seq AND o.destination_id = d.destination_id`,
);

/** What one call was, for its attempt row (the body is not stored: `encoding` rebuilds it from the event). */
export interface AttemptToRecord {
  /** 1-based across the delivery's whole life. */
  attempt: number;
  startedAt: Date;
  durationMs: number;
  url: string;
  requestHeaders: Record<string, string>;
  encoding: 'json' | 'form' | 'cloudevents';
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  error: string | null;
}

/** What becomes of a delivery's open row with this step: none kept, kept (retry due, held, ordered), or left as it is. */
export type OpenRowChange =
  | { kind: 'close' }
  | { kind: 'keep'; dueAt: Date | null; held: HoldReason | null; subject: string | null; expiresAt: Date | null }
  | { kind: 'unchanged' };

/**
 * One step's outcome, applied only while the delivery is still at the step the job was for (same
 * series and attempts in it, not final): a redelivery or a duplicate job that recorded first can never
 * be overwritten.
 */
export interface StepOutcome {
  seq: string;
  destinationId: string;
  accountId: number;
  series: number;
  seriesAttempts: number;
  /** The event's acceptance time as stored (LoadedDeliveryRow.accepted_at): its tallies' bucket and its latency's start. */
  createdAt: string | Date;
  /** null keeps the status (a hold). */
  status: EventStatus | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  lastError: string | null;
  attempt: AttemptToRecord | null;
  open: OpenRowChange;
}

/** PostgreSQL text cannot hold NUL; receivers' bodies and headers may contain anything. */
function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '');
}

function keptOpen(outcome: StepOutcome): Extract<OpenRowChange, { kind: 'keep' }> | null {
  return outcome.open.kind === 'keep' ? outcome.open : null;
}

/** RECORD_OUTCOMES's named values for a batch (columns travel as arrays: one text for any batch size). */
export function recordOutcomesParams(outcomes: readonly StepOutcome[]) {
  const seqs = outcomes.map((outcome) => BigInt(outcome.seq));
  const attempt = (pick: (attempt: AttemptToRecord) => unknown) => outcomes.map((outcome) => (outcome.attempt ? pick(outcome.attempt) : null));
  return {
    seqs: outcomes.map((outcome) => outcome.seq),
    destinationIds: outcomes.map((outcome) => outcome.destinationId),
    series: outcomes.map((outcome) => outcome.series),
    seriesAttempts: outcomes.map((outcome) => outcome.seriesAttempts),
    createdAts: outcomes.map((outcome) => outcome.createdAt),
    statuses: outcomes.map((outcome) => outcome.status),
    nextAttemptAts: outcomes.map((outcome) => outcome.nextAttemptAt),
    deliveredAts: outcomes.map((outcome) => outcome.deliveredAt),
    lastErrors: outcomes.map((outcome) => storable(outcome.lastError)),
    openChanges: outcomes.map((outcome) => outcome.open.kind),
    dueAts: outcomes.map((outcome) => keptOpen(outcome)?.dueAt ?? null),
    helds: outcomes.map((outcome) => keptOpen(outcome)?.held ?? null),
    subjects: outcomes.map((outcome) => keptOpen(outcome)?.subject ?? null),
    expiresAts: outcomes.map((outcome) => keptOpen(outcome)?.expiresAt ?? null),
    attemptNumbers: attempt((a) => a.attempt),
    startedAts: attempt((a) => a.startedAt),
    durations: attempt((a) => a.durationMs),
    urls: attempt((a) => a.url),
    requestHeaders: attempt((a) => JSON.stringify(a.requestHeaders)),
    encodings: attempt((a) => a.encoding),
    responseStatuses: attempt((a) => a.responseStatus),
    responseHeaders: attempt((a) => (a.responseHeaders ? JSON.stringify(a.responseHeaders) : null)),
    responseBodies: attempt((a) => storable(a.responseBody)),
    errors: attempt((a) => storable(a.error)),
    lowSeq: seqs.reduce((low, seq) => (seq < low ? seq : low)).toString(),
    highSeq: seqs.reduce((high, seq) => (seq > high ? seq : high)).toString(),
  };
}

type RecordParams = ReturnType<typeof recordOutcomesParams>;

/**
 * A whole batch of step outcomes in one statement (one round trip, atomic): the guarded delivery
 * changes (HOT updates: no index of `deliveries` names a column they set), the attempts of the changes
 * that applied, the open rows they keep or close, and the book entries, one per like change (the
 * previous status follows from the step: queued before its series' first attempt, retrying after; the
 * minute of acceptance and the latency bucket are all the books read of the times). An attempt whose step
 * another writer already recorded is not inserted: a delivery's history holds each attempt number once.
 * An erasure clears what a call in flight during it records by a second pass once such calls have
 * ended (CONTRACT §12), so this statement reads no event.
 *
 * Kept plan (GenericPlanPool): planned for its values it cost more to plan than to run; the guard finds
 * rows by primary key alone, and the scalar seq bounds drop the other days at executor start.
 */
export const RECORD_OUTCOMES = defineStatement<RecordParams, { seq: string; destination_id: string; series: number; series_attempts: number }>(
  'delivery-record',
  'generic',
  (p) => `
  WITH v AS (
    SELECT * FROM unnest(${p.seqs}::bigint[], ${p.destinationIds}::varchar[], ${p.series}::int[], ${p.seriesAttempts}::int[],
                         ${p.createdAts}::timestamptz[], ${p.statuses}::varchar[], ${p.nextAttemptAts}::timestamptz[],
                         ${p.deliveredAts}::timestamptz[], ${p.lastErrors}::text[], ${p.openChanges}::text[], ${p.dueAts}::timestamptz[],
                         ${p.helds}::varchar[], ${p.subjects}::text[], ${p.expiresAts}::timestamptz[], ${p.attemptNumbers}::int[],
                         ${p.startedAts}::timestamptz[], ${p.durations}::int[], ${p.urls}::text[], ${p.requestHeaders}::json[],
                         ${p.encodings}::varchar[], ${p.responseStatuses}::int[], ${p.responseHeaders}::json[], ${p.responseBodies}::text[],
                         ${p.errors}::text[])
           AS v(seq, destination_id, series, series_attempts, created_at, status, next_attempt_at, delivered_at, last_error,
                open_change, due_at, held, subject, expires_at, attempt, started_at, duration_ms, url, request_headers,
                encoding, response_status, response_headers, response_body, error)
  ),
  changed AS (
    UPDATE deliveries d
       SET status = COALESCE(v.status, d.status),
           attempts = d.attempts + (v.attempt IS NOT NULL)::int,
           series_attempts = d.series_attempts + (v.attempt IS NOT NULL)::int,
           next_attempt_at = v.next_attempt_at,
           delivered_at = COALESCE(v.delivered_at, d.delivered_at),
           last_error = v.last_error,
           updated_at = now()
      FROM v
     WHERE d.event_seq = v.seq AND d.destination_id = v.destination_id
       AND d.event_seq BETWEEN ${p.lowSeq}::bigint AND ${p.highSeq}::bigint
       AND d.series = v.series AND d.series_attempts = v.series_attempts AND d.status::text NOT IN ${FINAL_STATUS_LIST}
    RETURNING v.*, d.account_id
  ),
  attempted AS (
    INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers,
                                   encoding, response_status, response_headers, response_body, error)
    SELECT c.seq, c.destination_id, c.series, c.attempt, c.started_at, c.duration_ms, c.url, c.request_headers, c.encoding,
           c.response_status, c.response_headers, c.response_body, c.error
      FROM changed c WHERE c.attempt IS NOT NULL
  ),
  kept_open AS (
    INSERT INTO open_deliveries AS o (event_seq, destination_id, account_id, subject, due_at, held, expires_at)
    SELECT seq, destination_id, account_id, subject, due_at, held, expires_at FROM changed WHERE open_change = 'keep'
    ON CONFLICT (event_seq, destination_id) DO UPDATE
       SET due_at = excluded.due_at, held = excluded.held, subject = excluded.subject, expires_at = excluded.expires_at
  ),
  closed AS (
    DELETE FROM open_deliveries o USING changed c
     WHERE c.open_change = 'close' AND o.event_seq = c.seq AND o.destination_id = c.destination_id
  ),
  booked AS (
    INSERT INTO book_entries (account_id, created_at, from_status, to_status, attempted, delivered_at, tallied, events)
    SELECT account_id, created_at, from_status, to_status, attempted, created_at + ${latencyBucketFloorSql('latency')}, tallied, count(*)
      FROM (SELECT account_id, date_trunc('minute', created_at, 'UTC') AS created_at,
                   CASE WHEN series_attempts = 0 THEN 'queued' ELSE 'retrying' END AS from_status,
                   COALESCE(status, CASE WHEN series_attempts = 0 THEN 'queued' ELSE 'retrying' END) AS to_status,
                   (attempt IS NOT NULL)::int AS attempted,
                   CASE WHEN delivered_at IS NOT NULL THEN ${latencyBucketSql('delivered_at', 'created_at')} END AS latency,
                   destination_id = '${PRIMARY_DESTINATION_ID}' AS tallied
              FROM changed
             WHERE attempt IS NOT NULL OR status IS NOT NULL) AS change
     GROUP BY account_id, created_at, from_status, to_status, attempted, latency, tallied
  )
  SELECT seq::text AS seq, destination_id, series, series_attempts FROM changed`,
);
