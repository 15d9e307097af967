import { defineStatement } from '../statements/statement';
import { ALL_ACCOUNTS, LATENCY_BUCKETS, latencyBucketFloorSql, latencyBucketSql } from './delivery-rollup';
import { eventsAcceptedIn } from '../event-time/event-time';
import { ACCEPTED_PRIMARIES } from './accepted-count';

export { countAcceptedEvents } from './accepted-count';

/**
 * The books: event tallies (events per status and UTC minute and hour of acceptance, with the latency
 * histogram of the delivered ones, behind GET /admin/v1/stats) and delivery rollups (per account and
 * minute and hour of the outcome, behind the stats series and the portal's health). No trigger
 * aggregates anything:
 * - a new event is counted from its rows: ingest writes on its primary delivery the status it was stored
 *   with (`first_status`, never changed), and the worker's fold counts the events from the mark up to a seq
 *   no open transaction can still write below, moving the mark in the same statement (COUNT_ACCEPTED);
 * - the statements that change a primary delivery's status later append what they changed to
 *   `book_entries`, one row per change or per group of like changes weighted by `events` (the recorder:
 *   its outcomes by account, minute of acceptance, change and latency bucket, the entry's delivered_at
 *   then standing at its bucket's lower bound after that minute; the expiry and a redelivery: a status
 *   moving, an attempt made; the event tallies take the primary's entries only, the rollups every
 *   destination's), which the worker folds into both books every few seconds (FOLD_BOOKS).
 * Readers add the entries not folded yet and the events not counted yet, so an answer is exact at the
 * moment it is read.
 */

/** `ARRAY[count of rows whose <bucket> is 0, …, LATENCY_BUCKETS − 1]`, each row weighted by `weight`. */
function histogramSql(bucket: string, weight: string): string {
  return `ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, index) => `COALESCE(sum(${weight}) FILTER (WHERE ${bucket} = ${index}), 0)`).join(', ')}]::bigint[]`;
}

/**
 * The two sides of each entry as tally rows: its previous status counted out, its new one counted in,
 * when they differ; a `delivered` side carries its latency bucket.
 */
const ENTRY_SIDES = (entries: string): string => `
    SELECT b.created_at, s.status, s.delta,
           CASE WHEN s.status = 'delivered' AND b.delivered_at IS NOT NULL THEN ${latencyBucketSql('b.delivered_at', 'b.created_at')} END AS latency
      FROM ${entries} b
     CROSS JOIN LATERAL (VALUES (b.from_status, -b.events), (b.to_status, b.events)) AS s(status, delta)
     WHERE b.tallied AND s.status IS NOT NULL AND b.from_status IS DISTINCT FROM b.to_status`;

/** An entry's contribution to the delivery rollups, weighted by its events: outcomes, attempts, the latency of deliveries. */
const ENTRY_OUTCOMES = (entries: string): string => `
    SELECT b.account_id, b.at, b.attempted * b.events AS attempted,
           (b.to_status = 'delivered' AND b.from_status IS DISTINCT FROM 'delivered')::int * b.events AS delivered,
           (b.to_status IN ('failed', 'expired') AND b.from_status IS DISTINCT FROM b.to_status)::int * b.events AS failed,
           (b.attempted = 1 AND b.to_status IS DISTINCT FROM 'delivered')::int * b.events AS failed_attempt,
           CASE WHEN b.to_status = 'delivered' AND b.delivered_at IS NOT NULL THEN ${latencyBucketSql('b.delivered_at', 'b.created_at')} END AS latency
      FROM ${entries} b
     WHERE b.attempted = 1 OR (b.to_status IN ('delivered', 'failed', 'expired') AND b.from_status IS DISTINCT FROM b.to_status)`;

/**
 * The entries of `entries` summed into one row per bucket they fall in: the minute of acceptance and of
 * the change, the statuses, the attempt, the latency bucket (kept as a delivered_at at the bucket's lower
 * bound after that minute, as the recorder books it). Both books read nothing finer, so the fold's
 * histograms run over a few rows per account and minute instead of over every entry.
 */
const SUMMED_ENTRIES = (entries: string): string => `
    SELECT account_id, created_at, from_status, to_status, attempted,
           created_at + ${latencyBucketFloorSql('latency')} AS delivered_at, at, tallied, sum(events) AS events
      FROM (SELECT account_id, date_trunc('minute', created_at, 'UTC') AS created_at, from_status, to_status, attempted,
                   CASE WHEN delivered_at IS NOT NULL THEN ${latencyBucketSql('delivered_at', 'created_at')} END AS latency,
                   date_trunc('minute', at, 'UTC') AS at, tallied, events
              FROM ${entries}) AS entry
     GROUP BY account_id, created_at, from_status, to_status, attempted, latency, at, tallied`;

/**
 * Folds every entry written so far into both books and removes it, in one statement: an entry committed
 * after it started stays for the next fold. Rows are upserted in key order, so two folds (two workers
 * whose maintenance lock raced) wait on each other instead of deadlocking.
 */
export const FOLD_BOOKS = defineStatement<Record<string, never>, { folded: number }>(
  'fold-books',
  'plain',
  () => `
  WITH taken AS (
    DELETE FROM book_entries RETURNING *
  ),
  summed AS (${SUMMED_ENTRIES('taken')}
  ),
  tallied AS (
    INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events, latency_counts)
    SELECT g.granularity, date_trunc(g.granularity, s.created_at, 'UTC'), s.status, 0, sum(s.delta),
           CASE WHEN s.status = 'delivered' THEN ${histogramSql('s.latency', 's.delta')} END
      FROM (${ENTRY_SIDES('summed')}) s
     CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
     GROUP BY 1, 2, 3
     ORDER BY 1, 2, 3
    ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE
       SET events = t.events + excluded.events,
           latency_counts = add_latency_counts(t.latency_counts, excluded.latency_counts)
  ),
  rolled AS (
    INSERT INTO delivery_rollups AS r (granularity, account_id, bucket_start, delivered, failed, attempts, failed_attempts, latency_counts)
    SELECT g.granularity, a.account_id, date_trunc(g.granularity, o.at, 'UTC'),
           sum(o.delivered), sum(o.failed), sum(o.attempted), sum(o.failed_attempt), ${histogramSql('o.latency', 'o.delivered')}
      FROM (${ENTRY_OUTCOMES('summed')}) o
     CROSS JOIN LATERAL (VALUES (o.account_id), (${ALL_ACCOUNTS})) AS a(account_id)
     CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
     GROUP BY 1, 2, 3
     ORDER BY 1, 2, 3
    ON CONFLICT (granularity, account_id, bucket_start) DO UPDATE
       SET delivered = r.delivered + excluded.delivered,
           failed = r.failed + excluded.failed,
           attempts = r.attempts + excluded.attempts,
           failed_attempts = r.failed_attempts + excluded.failed_attempts,
           latency_counts = add_latency_counts(r.latency_counts, excluded.latency_counts)
  )
  SELECT count(*)::int AS folded FROM taken`,
);

/**
 * The book entries that take deleted primary deliveries out of the event tallies: each delivery's status
 * counted out; for an event not counted yet (at or above the mark), its first status counted in instead,
 * as the count the fold would have made never comes. `rows` names a relation with account_id,
 * created_at, seq, first_status, status and delivered_at. Takes the mark FOR SHARE: a fold waits for
 * the deleting transaction, or this statement for the fold (and then reads the mark the fold left).
 */
export function bookedOutSql(rows: string): string {
  const countedInstead = `CASE WHEN r.seq >= m.counted_below THEN r.first_status END`;
  return `
    INSERT INTO book_entries (account_id, created_at, from_status, to_status, delivered_at)
    SELECT r.account_id, r.created_at, r.status, ${countedInstead}, r.delivered_at
      FROM ${rows} r CROSS JOIN (SELECT counted_below FROM book_marks WHERE id = 1 FOR SHARE) AS m
     WHERE r.status IS DISTINCT FROM ${countedInstead}`;
}

/** One status's share of a window of the event tallies: its events and, for `delivered`, their latency histogram. */
export interface StatusTally {
  status: string;
  events: number;
  latency_counts: number[] | null;
}

/** Tallied buckets of one granularity starting in [since, until) (until null: no end), with the entries not folded yet and the events not counted yet. */
export const TALLIED_BUCKETS = defineStatement<{ granularity: 'minute' | 'hour'; since: Date | string; until: Date | null }, StatusTally>(
  'tallied-buckets',
  'plain',
  (p) => `
  SELECT status, sum(events)::float8 AS events, sum_latency_counts(latency_counts)::float8[] AS latency_counts
    FROM (SELECT status::text AS status, events, latency_counts FROM event_tallies
           WHERE granularity = ${p.granularity} AND bucket_start >= ${p.since}::timestamptz
             AND (${p.until}::timestamptz IS NULL OR bucket_start < ${p.until}::timestamptz)
          UNION ALL
          SELECT s.status, sum(s.delta), CASE WHEN s.status = 'delivered' THEN ${histogramSql('s.latency', 's.delta')} END
            FROM (${ENTRY_SIDES('book_entries')}) s
           WHERE date_trunc(${p.granularity}, s.created_at, 'UTC') >= ${p.since}::timestamptz
             AND (${p.until}::timestamptz IS NULL OR date_trunc(${p.granularity}, s.created_at, 'UTC') < ${p.until}::timestamptz)
           GROUP BY s.status
          UNION ALL
          SELECT d.first_status, count(*), NULL
            FROM ${ACCEPTED_PRIMARIES}
             AND d.event_seq >= (SELECT counted_below FROM book_marks WHERE id = 1) AND e.seq >= (SELECT counted_below FROM book_marks WHERE id = 1)
             AND date_trunc(${p.granularity}, e.created_at, 'UTC') >= ${p.since}::timestamptz
             AND (${p.until}::timestamptz IS NULL OR date_trunc(${p.granularity}, e.created_at, 'UTC') < ${p.until}::timestamptz)
           GROUP BY d.first_status) AS parts
   GROUP BY status`,
);

/** The same shape for the events accepted in [since, until), counted from their primary deliveries (at most a minute of them). */
export const COUNTED_SPAN = defineStatement<{ since: Date; until: Date }, StatusTally>(
  'counted-span',
  'plain',
  (p) => `
  SELECT status, count(*)::float8 AS events,
         CASE WHEN status = 'delivered' THEN ${histogramSql('bucket', '1')}::float8[] END AS latency_counts
    FROM (SELECT d.status::text AS status,
                 CASE WHEN d.status = 'delivered' AND d.delivered_at IS NOT NULL THEN ${latencyBucketSql('d.delivered_at', 'e.created_at')} END AS bucket
            FROM ${eventsAcceptedIn(`${p.since}::timestamptz`, `${p.until}::timestamptz`)} AS e
            JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary') AS counted
   GROUP BY status`,
);

export interface RollupRow {
  bucket_start: Date;
  delivered: number;
  failed: number;
  attempts: number;
  failed_attempts: number;
  latency_counts: number[];
}

/** One account's (or every account's, ALL_ACCOUNTS) rolled-up buckets of one granularity in [since, until), with the entries not folded yet. */
export const ROLLED_UP_BUCKETS = defineStatement<{ granularity: 'minute' | 'hour'; accountId: number; since: Date; until: Date }, RollupRow>(
  'rolled-up-buckets',
  'plain',
  (p) => `
  SELECT bucket_start, sum(delivered)::float8 AS delivered, sum(failed)::float8 AS failed, sum(attempts)::float8 AS attempts,
         sum(failed_attempts)::float8 AS failed_attempts, sum_latency_counts(latency_counts)::float8[] AS latency_counts
    FROM (SELECT bucket_start, delivered, failed, attempts, failed_attempts, latency_counts FROM delivery_rollups
           WHERE granularity = ${p.granularity} AND account_id = ${p.accountId}
             AND bucket_start >= ${p.since} AND bucket_start < ${p.until}
          UNION ALL
          SELECT date_trunc(${p.granularity}, o.at, 'UTC'), sum(o.delivered), sum(o.failed), sum(o.attempted), sum(o.failed_attempt),
                 ${histogramSql('o.latency', 'o.delivered')}
            FROM (${ENTRY_OUTCOMES('book_entries')}) o
           WHERE (${p.accountId} = ${ALL_ACCOUNTS} OR o.account_id = ${p.accountId})
             AND o.at >= ${p.since} AND o.at < ${p.until}
           GROUP BY 1) AS parts
   GROUP BY bucket_start
   ORDER BY bucket_start`,
);

/** Counts the events accepted in [since, until) into the event tallies again, by their primary delivery's status (retention's retally). */
export const RETALLY_SPAN = defineStatement<{ since: Date; until: Date }>(
  'retally-span',
  'plain',
  (p) => `
  INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events, latency_counts)
  SELECT g.granularity, date_trunc(g.granularity, r.created_at, 'UTC'), r.status, 0, count(*),
         CASE WHEN r.status = 'delivered' THEN ${histogramSql('r.latency', '1')} END
    FROM (SELECT e.created_at, d.status::text AS status,
                 CASE WHEN d.status = 'delivered' AND d.delivered_at IS NOT NULL THEN ${latencyBucketSql('d.delivered_at', 'e.created_at')} END AS latency
            FROM ${eventsAcceptedIn(`${p.since}::timestamptz`, `${p.until}::timestamptz`)} AS e
            JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary') AS r
   CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE
     SET events = t.events + excluded.events, latency_counts = add_latency_counts(t.latency_counts, excluded.latency_counts)`,
);
