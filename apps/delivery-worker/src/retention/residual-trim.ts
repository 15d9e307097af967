import type { QueryRunner } from 'typeorm';
import { books, partitions, PRIMARY_DESTINATION_ID } from '@app/persistence';

/** One batch's outcome; `last` is where it stopped (PostgreSQL text, microseconds kept), null when nothing was picked. */
export interface BatchOutcome {
  picked: number;
  deleted: number;
  /** Event ids forgotten with the rows (events only). */
  forgotten?: number;
  last: string | null;
}

/**
 * The partitions that are not one day each (`<table>_default`, and `<table>_legacy` holding what existed
 * before partitioning) cannot be dropped by day; their expired events go in batches, oldest first along
 * the created_at index. `$2` is where the previous batch stopped (inclusive, for rows sharing a
 * timestamp), so a backlog costs linear, not quadratic, time. An event still owed a delivery stays (its
 * message is what that delivery sends), unless the delivery is only held by a pause: a destination paused
 * past the window does not keep its account's events for ever. The event's deliveries, attempts and open
 * rows and its id go with it, and its primary delivery's status leaves the tallies through a book entry.
 */
export function deleteEventsSql(eventsPartition: string, attemptsPartition: string): string {
  return `
  WITH picked AS (
    SELECT seq, created_at FROM ${eventsPartition} e
     WHERE created_at < $1 AND created_at >= $2::timestamptz
       AND NOT EXISTS (${partitions.owedDeliveries('deliveries', 'd.event_seq = e.seq')})
     ORDER BY created_at
     LIMIT $3
  ),
  removed AS (
    DELETE FROM ${eventsPartition} WHERE seq IN (SELECT seq FROM picked) AND created_at < $1
    RETURNING seq, event_id, account_id, created_at
  ),
  keys AS (
    DELETE FROM event_keys k USING removed r WHERE k.event_id = r.event_id AND k.event_seq = r.seq RETURNING 1
  ),
  attempts AS (
    DELETE FROM ${attemptsPartition} WHERE event_seq IN (SELECT seq FROM removed)
  ),
  deliveries_removed AS (
    DELETE FROM deliveries WHERE event_seq IN (SELECT seq FROM removed) RETURNING event_seq, destination_id, status, first_status, delivered_at
  ),
  open_removed AS (
    DELETE FROM open_deliveries WHERE event_seq IN (SELECT seq FROM removed)
  ),
  primaries AS (
    SELECT r.account_id, r.created_at, r.seq, d.first_status, d.status, d.delivered_at
      FROM removed r JOIN deliveries_removed d ON d.event_seq = r.seq AND d.destination_id = '${PRIMARY_DESTINATION_ID}'
  ),
  untallied AS (${books.bookedOutSql('primaries')}
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT count(*) FROM keys)::int AS forgotten,
         (SELECT max(created_at) FROM picked)::text AS last`;
}

export function deleteBotCallsSql(partition: string): string {
  return `
  WITH picked AS (
    SELECT id, created_at FROM ${partition}
     WHERE created_at < $1 AND created_at >= $2::timestamptz
     ORDER BY created_at
     LIMIT $3
  ),
  removed AS (
    DELETE FROM ${partition} WHERE id IN (SELECT id FROM picked) RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT max(created_at) FROM picked)::text AS last`;
}

/** Names of the partitions of `table` that exist among `names` (legacy ones are gone once emptied). */
export async function existingTables(runner: QueryRunner, names: string[]): Promise<Set<string>> {
  const rows = (await runner.query(`SELECT relname FROM pg_class WHERE relname = ANY($1::text[]) AND relkind = 'r'`, [names])) as {
    relname: string;
  }[];
  return new Set(rows.map((row) => row.relname));
}

/**
 * Delivery rollups (the stats series) older than the window, oldest first along their bucket index;
 * `$2` is where the previous batch stopped. Both granularities follow RETENTION_DAYS, like the log they sum.
 */
export const DELETE_ROLLUPS_SQL = `
  WITH picked AS (
    SELECT granularity, account_id, bucket_start FROM delivery_rollups
     WHERE bucket_start < $1 AND bucket_start >= $2::timestamptz
     ORDER BY bucket_start
     LIMIT $3
  ),
  removed AS (
    DELETE FROM delivery_rollups r USING picked p
     WHERE r.granularity = p.granularity AND r.account_id = p.account_id AND r.bucket_start = p.bucket_start
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT max(bucket_start) FROM picked)::text AS last`;
