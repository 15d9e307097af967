import type { QueryRunner } from 'typeorm';
import { LATENCY_BUCKETS, latencyBucketSql } from './delivery-rollup';

/**
 * Event tallies (migration 1764400000000): events per status and UTC minute and hour of creation, with
 * the latency histogram of the delivered ones, kept by statement-level triggers on `events` (ingest's
 * store counts its new events itself, in its own statement: stats/event-books.ts). Statements
 * that name a partition directly bypass those triggers; the retention paths that do so account for the
 * rows they remove with `tally_event_rows` themselves (see partitions/partition-maintenance.ts and the
 * worker's residual trim).
 */

export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** Stripes of buckets in hours that ended this long ago are folded into stripe 0: late writers are rare by then. */
export const TALLY_FOLD_AFTER_MS = HOUR_MS;

export type TallyGranularity = 'minute' | 'hour';

/** One status's share of a window: its events and, for `delivered`, their latency histogram. */
export interface StatusTally {
  status: string;
  events: number;
  latency_counts: number[] | null;
}

/** Buckets of one granularity starting in [$2, $3) ($3 null: no end), summed over stripes and buckets. */
export const TALLIED_BUCKETS_SQL = `
  SELECT status, sum(events)::float8 AS events, sum_latency_counts(latency_counts)::float8[] AS latency_counts
    FROM event_tallies
   WHERE granularity = $1 AND bucket_start >= $2::timestamptz AND ($3::timestamptz IS NULL OR bucket_start < $3::timestamptz)
   GROUP BY status`;

/**
 * The same shape for the events created in [$1, $2): the part of a window before its first whole minute,
 * counted from the rows through the created_at index (at most a minute of events).
 */
export const COUNTED_SPAN_SQL = `
  SELECT status, count(*)::float8 AS events,
         CASE WHEN status = 'delivered' THEN ARRAY[${Array.from(
           { length: LATENCY_BUCKETS },
           (_, index) => `count(*) FILTER (WHERE bucket = ${index})`,
         ).join(', ')}]::float8[] END AS latency_counts
    FROM (SELECT status::text AS status,
                 CASE WHEN status = 'delivered' AND delivered_at IS NOT NULL
                      THEN ${latencyBucketSql('delivered_at', 'created_at')} END AS bucket
            FROM events
           WHERE created_at >= $1 AND created_at < $2) AS e
   GROUP BY status`;

/** The first bucket boundary of `stepMs` at or after `since`. */
export function firstWhole(since: Date, stepMs: number): Date {
  return new Date(Math.ceil(since.getTime() / stepMs) * stepMs);
}

/** Adds tallies of several windows status by status (histograms element-wise). */
export function mergeTallies(...parts: readonly StatusTally[][]): Map<string, { events: number; latencyCounts: number[] }> {
  const merged = new Map<string, { events: number; latencyCounts: number[] }>();
  for (const rows of parts) {
    for (const row of rows) {
      const entry = merged.get(row.status) ?? { events: 0, latencyCounts: new Array<number>(LATENCY_BUCKETS).fill(0) };
      entry.events += Number(row.events);
      row.latency_counts?.forEach((count, index) => (entry.latencyCounts[index] += Number(count)));
      merged.set(row.status, entry);
    }
  }
  return merged;
}

/**
 * Folds the per-backend stripes of buckets that start before `beforeMs` into stripe 0 and removes rows
 * that netted out to nothing. Rows a writer holds right now are skipped (the next fold takes them), so
 * the fold never waits on ingest or the worker and they never wait on a row the fold will not release
 * soon; only the fold writes stripe 0, and callers hold the maintenance lock. Returns the rows folded.
 */
export async function foldEventTallies(runner: QueryRunner, beforeMs: number): Promise<number> {
  const [{ folded }] = (await runner.query(
    `WITH taken AS (
       SELECT granularity, bucket_start, status, stripe FROM event_tallies
        WHERE bucket_start < $1 AND stripe <> 0
        ORDER BY granularity, bucket_start, status, stripe
          FOR UPDATE SKIP LOCKED
     ),
     removed AS (
       DELETE FROM event_tallies t USING taken
        WHERE t.granularity = taken.granularity AND t.bucket_start = taken.bucket_start AND t.status = taken.status AND t.stripe = taken.stripe
       RETURNING t.granularity, t.bucket_start, t.status, t.events, t.latency_counts
     ),
     added AS (
       INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events, latency_counts)
       SELECT granularity, bucket_start, status, 0, sum(events), sum_latency_counts(latency_counts) FROM removed
        GROUP BY granularity, bucket_start, status
        ORDER BY granularity, bucket_start, status
       ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE
          SET events = t.events + excluded.events,
              latency_counts = add_latency_counts(t.latency_counts, excluded.latency_counts)
     )
     SELECT count(*)::int AS folded FROM removed`,
    [new Date(beforeMs)],
  )) as { folded: number }[];
  await runner.query(
    `DELETE FROM event_tallies
      WHERE stripe = 0 AND bucket_start < $1 AND events = 0 AND (latency_counts IS NULL OR 0 = ALL (latency_counts))`,
    [new Date(beforeMs)],
  );
  return folded;
}

/** `SELECT tally_event_rows(…)` over `rows` (a FROM item with created_at, status and delivered_at), each row counted `sign` times. */
export function tallyRowsSql(rows: string, sign: 1 | -1): string {
  return `SELECT tally_event_rows(array_agg(created_at), array_agg(status::text), array_agg(delivered_at), array_agg(${sign}))
            FROM ${rows} HAVING count(*) > 0`;
}
