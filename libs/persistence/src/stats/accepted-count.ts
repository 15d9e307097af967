import type { QueryRunner } from 'typeorm';
import { defineStatement } from '../statements/statement';
import { SEQ_COUNTER_BITS } from '../event-time/event-time';

/**
 * The seq below which no transaction open now can still write an event: a seq holds the clock when it was
 * drawn, never earlier than its transaction's start, so the oldest start among the database's other open
 * client transactions bounds it (the clock, when none is open). A session whose state this role may not
 * see (another role's, without pg_read_all_stats) counts as started a minute ago, longer than the
 * statements' 15 s bound. Read before the counting statement takes its snapshot: a transaction gone from
 * pg_stat_activity has committed (or rolled back) by then, so the snapshot sees what it wrote.
 */
const COUNTABLE_BELOW = `
    SELECT floor(extract(epoch FROM least(clock_timestamp(), min(started))) * 1000)::bigint << ${SEQ_COUNTER_BITS.toString()}
      FROM (SELECT CASE WHEN state IS NULL THEN clock_timestamp() - interval '1 minute' ELSE xact_start END AS started
              FROM pg_stat_activity
             WHERE backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid()) AS open`;

/**
 * The mark (the events below it are in the tallies), locked for this transaction: folds take their turns,
 * and a statement that deletes events (bookedOutSql) waits for the fold to commit, or the fold for it.
 */
export const LOCK_ACCEPTED_MARK = defineStatement<Record<string, never>, { counted_below: string; countable_below: string }>(
  'lock-accepted-mark',
  'plain',
  () => `SELECT counted_below::text AS counted_below, (${COUNTABLE_BELOW})::text AS countable_below FROM book_marks WHERE id = 1 FOR UPDATE`,
);

/**
 * The primary deliveries (`d`) that carry the status their event is counted under, with their events
 * (`e`); callers bound both d.event_seq and e.seq (the join does not carry a range from one to the other,
 * and each side's partitions are pruned by its own). Rows stored before the column (no first_status) were
 * counted by book entries instead.
 */
export const ACCEPTED_PRIMARIES = `deliveries d JOIN events e ON e.seq = d.event_seq
     WHERE d.destination_id = 'primary' AND d.first_status IS NOT NULL`;

/**
 * Counts the events accepted in [from, below) into the event tallies under their primary delivery's first
 * status and moves the mark to `below`, in one statement (run after LOCK_ACCEPTED_MARK, in its transaction).
 */
export const COUNT_ACCEPTED = defineStatement<{ from: string; below: string }, { counted: number }>(
  'count-accepted',
  'plain',
  (p) => `
  WITH accepted AS (
    SELECT e.created_at, d.first_status FROM ${ACCEPTED_PRIMARIES} AND d.event_seq >= ${p.from}::bigint AND d.event_seq < ${p.below}::bigint
       AND e.seq >= ${p.from}::bigint AND e.seq < ${p.below}::bigint
  ),
  tallied AS (
    INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events)
    SELECT g.granularity, date_trunc(g.granularity, a.created_at, 'UTC'), a.first_status, 0, count(*)
      FROM accepted a CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
     GROUP BY 1, 2, 3
     ORDER BY 1, 2, 3
    ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE SET events = t.events + excluded.events
  ),
  marked AS (
    UPDATE book_marks SET counted_below = ${p.below}::bigint WHERE id = 1
  )
  SELECT count(*)::int AS counted FROM accepted`,
);

export interface AcceptedCount {
  /** Events counted into the tallies by this pass. */
  counted: number;
  /** The mark after it: every event below it is in the tallies. */
  countedBelow: bigint;
}

/**
 * Counts the events accepted since the last pass into the event tallies (books.COUNT_ACCEPTED), in the
 * runner's transaction or one of its own: the mark is locked first, then the count takes its snapshot,
 * so it sees every event below the horizon the lock's statement read.
 */
export async function countAcceptedEvents(runner: QueryRunner): Promise<AcceptedCount> {
  const own = !runner.isTransactionActive;
  if (own) await runner.startTransaction();
  try {
    const [mark] = (await runner.query(LOCK_ACCEPTED_MARK.text, LOCK_ACCEPTED_MARK.values({}))) as { counted_below: string; countable_below: string }[];
    let result: AcceptedCount = { counted: 0, countedBelow: BigInt(mark.counted_below) };
    if (BigInt(mark.countable_below) > result.countedBelow) {
      const [row] = (await runner.query(COUNT_ACCEPTED.text, COUNT_ACCEPTED.values({ from: mark.counted_below, below: mark.countable_below }))) as { counted: number }[];
      result = { counted: row.counted, countedBelow: BigInt(mark.countable_below) };
    }
    if (own) await runner.commitTransaction();
    return result;
  } catch (error) {
    if (own) await runner.rollbackTransaction();
    throw error;
  }
}
