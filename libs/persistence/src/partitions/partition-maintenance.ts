import type { QueryRunner } from 'typeorm';
import { columnList, listPartitions, overlaps, type PartitionInfo } from './partition-catalog';
import {
  DAY_MS,
  dailyPartitionName,
  dayBounds,
  defaultPartitionName,
  PARTITIONED_TABLES,
  type PartitionedTable,
  seqAt,
  seqTime,
  utcDayStart,
} from './partition-layout';
import { PENDING_STATUS_LIST } from '../deliveries/delivery-lifecycle';
import { FOLD_BOOKS, RETALLY_SPAN } from '../stats/books.statements';
import { countAcceptedEvents } from '../stats/accepted-count';
import { IN_LINE_TOLERANCE_MS } from '../event-time/event-time';

/** Partition DDL waits at most this long for its lock, then gives up until the next run instead of queueing every query behind it. */
export const PARTITION_LOCK_TIMEOUT = '5s';
/** Days created ahead of today by default (the worker runs the job hourly, migrate once). */
export const DEFAULT_PARTITIONS_AHEAD_DAYS = 7;

async function inTransaction<T>(runner: QueryRunner, work: () => Promise<T>): Promise<T> {
  await runner.startTransaction();
  try {
    await runner.query(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
    const result = await work();
    await runner.commitTransaction();
    return result;
  } catch (error) {
    await runner.rollbackTransaction();
    throw error;
  }
}

/**
 * Creates one day's partition without blocking readers and writers of the table: a plain table shaped
 * like the parent, the day's rows moved over from the default partition (normally none: only when
 * inserts ran ahead of this job), then ATTACH, which needs only SHARE UPDATE EXCLUSIVE on the parent and
 * builds the parent's indexes on the new, small table.
 */
async function createDay(runner: QueryRunner, table: PartitionedTable, dayStartMs: number): Promise<string> {
  const name = dailyPartitionName(table, dayStartMs);
  const { from, to } = dayBounds(table, dayStartMs);
  const key = PARTITIONED_TABLES[table].key;
  await inTransaction(runner, async () => {
    const fillfactor = PARTITIONED_TABLES[table].fillfactor;
    await runner.query(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)${fillfactor ? ` WITH (fillfactor = ${fillfactor})` : ''}`);
    const columns = await columnList(runner, table);
    await runner.query(
      `WITH moved AS (DELETE FROM ${defaultPartitionName(table)} WHERE ${key} >= ${from} AND ${key} < ${to} RETURNING ${columns})
       INSERT INTO ${name} (${columns}) SELECT ${columns} FROM moved`,
    );
    await runner.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
  });
  return name;
}

/**
 * Makes sure every partitioned table has a partition for each UTC day from `fromMs`'s day through
 * `aheadDays` days later; days an existing partition already covers (the legacy one) are skipped.
 * Returns the partitions created. Callers hold the maintenance lock; DDL of two callers would only
 * collide and fail, never corrupt.
 */
export async function ensureDailyPartitions(runner: QueryRunner, aheadDays: number, fromMs = Date.now()): Promise<string[]> {
  const created: string[] = [];
  const firstDay = utcDayStart(fromMs);
  for (const table of Object.keys(PARTITIONED_TABLES) as PartitionedTable[]) {
    const existing = await inTransaction(runner, () => listPartitions(runner, table));
    for (let day = 0; day <= aheadDays; day += 1) {
      const dayStart = firstDay + day * DAY_MS;
      const [from, to] = PARTITIONED_TABLES[table].kind === 'seq' ? [seqAt(dayStart), seqAt(dayStart + DAY_MS)] : [BigInt(dayStart), BigInt(dayStart + DAY_MS)];
      if (existing.some((partition) => overlaps(partition, from, to))) continue;
      created.push(await createDay(runner, table, dayStart));
    }
  }
  return created;
}

/**
 * Forgets the tallies of [fromMs, toMs) and counts again the events accepted then that are still
 * attached; the book entries not folded yet are folded first, and the span's events must all be counted
 * already, so nothing lands on a forgotten bucket or is counted again after it. While an open transaction
 * holds the count back that far (one open for a day), the day stays, and the next round tries again.
 */
async function retallyDay(runner: QueryRunner, fromMs: number, toMs: number): Promise<void> {
  const span = [new Date(fromMs), new Date(toMs)];
  const [mark] = (await runner.query(`SELECT counted_below::text AS counted_below FROM book_marks WHERE id = 1 FOR SHARE`)) as { counted_below: string }[];
  if (BigInt(mark.counted_below) < seqAt(toMs + IN_LINE_TOLERANCE_MS)) {
    throw new Error(`the events accepted before ${span[1].toISOString()} are not all counted yet (an open transaction holds the count back): the day is kept for now`);
  }
  await runner.query(FOLD_BOOKS.text);
  await runner.query(`DELETE FROM event_tallies WHERE granularity IN ('minute', 'hour') AND bucket_start >= $1 AND bucket_start < $2`, span);
  await runner.query(RETALLY_SPAN.text, RETALLY_SPAN.values({ since: span[0], until: span[1] }));
}

/**
 * The deliveries that keep their event past its day (`where` narrows them, over alias `d`): pending and
 * not held only by a pause, as a destination paused past the retention window does not keep its
 * account's events for ever.
 */
export function owedDeliveries(deliveries: string, where: string): string {
  return `SELECT d.event_seq FROM ${deliveries} d
           WHERE ${where} AND d.status IN ${PENDING_STATUS_LIST}
             AND NOT EXISTS (SELECT 1 FROM open_deliveries o WHERE o.event_seq = d.event_seq
                                AND o.destination_id = d.destination_id AND o.held = 'paused')`;
}

/** The daily events partitions whose whole range ends at or before `cutoffMs`, oldest first. */
export async function expiredEventDays(runner: QueryRunner, cutoffMs: number): Promise<PartitionInfo[]> {
  const seqCutoff = seqAt(cutoffMs);
  const events = await inTransaction(runner, () => listPartitions(runner, 'events'));
  return events
    .filter((partition) => partition.from !== null && partition.to !== null && partition.to <= seqCutoff)
    .sort((a, b) => (a.from! < b.from! ? -1 : 1));
}

/**
 * One batch of forgetting the ids of an expired day's events, run before the day is dropped (`$1`: the
 * day's end; `$2`: the seq the previous batch ended at, exclusive; `$3`: the batch size). Keys are found
 * by event id (`event_keys_pkey`), so `event_keys` needs no index on seq, which would cost every stored
 * event a btree insert. Ids of events still owed a delivery stay taken. Outside the drop's transaction,
 * which holds the parents' locks and must stay short.
 */
export function forgetDayKeysSql(eventsPartition: string): string {
  return `
  WITH picked AS (
    SELECT seq, event_id FROM ${eventsPartition} WHERE seq > $2::bigint AND seq < $1::bigint ORDER BY seq LIMIT $3
  ),
  removed AS (
    DELETE FROM event_keys k USING picked p
     WHERE k.event_id = p.event_id AND k.event_seq = p.seq
       AND NOT EXISTS (${owedDeliveries('deliveries', 'd.event_seq = p.seq')})
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked,
         (SELECT count(*) FROM removed)::int AS deleted,
         (SELECT max(seq) FROM picked)::text AS last`;
}

export interface DroppedDay {
  partition: string;
  /** Events still owed a delivery, moved to the default partitions with their deliveries and attempts (same seq). */
  keptPending: number;
}

/**
 * Drops the daily partitions whose whole range ends at or before `cutoffMs`: a day's events, deliveries
 * and attempts go in one transaction. Events still owed a delivery (one of theirs pending and not held
 * by a pause: a destination paused past the retention window does not keep its account's events for
 * ever) are first copied with their deliveries and attempts into the default partitions, keeping their
 * seq, so queued jobs, cursors and the event_keys entry stay valid (the ids of the others are forgotten
 * beforehand, in batches: forgetDayKeysSql); the open rows of the deliveries
 * dropped go with them. Detaching attempts, then events, then deliveries matches the lock order of the
 * writers, so none of them deadlocks with it. The event tallies of the day's hours are counted again
 * from what remains (retallyDay).
 */
export async function dropExpiredPartitions(runner: QueryRunner, cutoffMs: number): Promise<DroppedDay[]> {
  const dropped: DroppedDay[] = [];
  // The days about to go are counted into the tallies first (retallyDay refuses a day that is not).
  await countAcceptedEvents(runner);
  const attempts = await inTransaction(runner, () => listPartitions(runner, 'delivery_attempts'));
  const deliveries = await inTransaction(runner, () => listPartitions(runner, 'deliveries'));
  for (const partition of await expiredEventDays(runner, cutoffMs)) {
    const sameDay = (candidate: PartitionInfo) => candidate.from === partition.from && candidate.to === partition.to;
    const attemptsTwin = attempts.find(sameDay);
    const deliveriesTwin = deliveries.find(sameDay);
    const keptPending = await inTransaction(runner, async () => {
      if (attemptsTwin) await runner.query(`ALTER TABLE delivery_attempts DETACH PARTITION ${attemptsTwin.name}`);
      await runner.query(`ALTER TABLE events DETACH PARTITION ${partition.name}`);
      if (deliveriesTwin) await runner.query(`ALTER TABLE deliveries DETACH PARTITION ${deliveriesTwin.name}`);
      // A day from before destinations has no deliveries partition of its own: its deliveries (the primary's,
      // since 1765500000000) live in the default one, still attached, and go with their events below.
      const dayRange = `d.event_seq >= ${partition.from!.toString()} AND d.event_seq < ${partition.to!.toString()}`;
      const owed = `seq IN (${owedDeliveries(deliveriesTwin ? deliveriesTwin.name : 'deliveries', dayRange)})`;
      const eventColumns = await columnList(runner, 'events');
      const [{ count }] = (await runner.query(
        `WITH kept AS (
           INSERT INTO events (${eventColumns}) SELECT ${eventColumns} FROM ${partition.name} WHERE ${owed} RETURNING 1
         ) SELECT count(*)::int AS count FROM kept`,
      )) as { count: number }[];
      // The day's ids were forgotten before this transaction (forgetDayKeysSql): a kept event whose delivery
      // became pending since (a redelivery) lost its id then, and takes it back unless a new event has it.
      if (count > 0) {
        await runner.query(
          `INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM ${partition.name} WHERE ${owed} ON CONFLICT (event_id) DO NOTHING`,
        );
      }
      for (const [twin, parent] of [[attemptsTwin, 'delivery_attempts'], [deliveriesTwin, 'deliveries']] as const) {
        if (!twin) continue;
        if (count > 0) {
          const columns = await columnList(runner, parent);
          await runner.query(
            `INSERT INTO ${parent} (${columns}) SELECT ${columns} FROM ${twin.name} WHERE event_seq IN (SELECT seq FROM ${partition.name} WHERE ${owed})`,
          );
        }
      }
      const goneWithDay = `event_seq >= ${partition.from!.toString()} AND event_seq < ${partition.to!.toString()}
            AND event_seq NOT IN (SELECT seq FROM ${partition.name} WHERE ${owed})`;
      if (!deliveriesTwin) await runner.query(`DELETE FROM deliveries WHERE ${goneWithDay}`);
      await runner.query(`DELETE FROM open_deliveries WHERE ${goneWithDay}`);
      for (const twin of [attemptsTwin, deliveriesTwin]) if (twin) await runner.query(`DROP TABLE ${twin.name}`);
      await runner.query(`DROP TABLE ${partition.name}`);
      await retallyDay(runner, seqTime(partition.from!), seqTime(partition.to!));
      return count;
    });
    dropped.push({ partition: partition.name, keptPending });
  }
  // Bot calls owe nothing to anyone: their expired days are simply dropped.
  const botCalls = await inTransaction(runner, () => listPartitions(runner, 'bot_calls'));
  for (const partition of botCalls) {
    if (partition.from === null || partition.to === null || partition.to > BigInt(cutoffMs)) continue;
    await inTransaction(runner, () => runner.query(`DROP TABLE ${partition.name}`));
    dropped.push({ partition: partition.name, keptPending: 0 });
  }
  return dropped;
}
