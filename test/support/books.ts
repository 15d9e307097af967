import type { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, type StatusTally, TALLIED_BUCKETS } from '@app/persistence/testing';

/**
 * The event books as their readers see them (event_tallies plus the book entries not folded yet and the
 * events not counted yet, read through TALLIED_BUCKETS, the statement behind GET /admin/v1/stats) against
 * a count of the rows they stand for (each event by its primary delivery's status), bucket by bucket.
 * Both sides are read in one REPEATABLE READ snapshot: a new event carries its accepted status, and every
 * statement that changes a primary delivery later appends its book entry in the same statement, so the
 * two agree at any snapshot whatever the folder or other writers are doing.
 */

const GRANULARITIES = { minute: 60_000, hour: 3_600_000 } as const;
type Granularity = keyof typeof GRANULARITIES;

export interface BucketTally {
  granularity: Granularity;
  /** Epoch ms of the bucket's start. */
  bucket: number;
  status: string;
  events: number;
  /** The latency histogram of a `delivered` bucket (LATENCY_BUCKETS counts); null for the other statuses. */
  latency: number[] | null;
}

/** A database: TypeORM's (a connection of its pool is taken for the snapshot) or one pg Client the caller does not use meanwhile. */
export type BooksDatabase = DataSource | Client;

type Query = (sql: string, parameters?: unknown[]) => Promise<unknown[]>;

/** Events accepted in [since, until), both whole hours (an hour's tally covers the whole hour): by default all of them. */
export interface BooksWindow {
  since?: Date;
  until?: Date;
}

function isClient(db: BooksDatabase): db is Client {
  return !('createQueryRunner' in db);
}

async function inOneSnapshot<T>(db: BooksDatabase, work: (query: Query) => Promise<T>): Promise<T> {
  if (isClient(db)) {
    const query: Query = async (sql, parameters) => (await db.query(sql, parameters)).rows as unknown[];
    return inTransaction(query, work);
  }
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    return await inTransaction((sql, parameters) => runner.query(sql, parameters) as Promise<unknown[]>, work);
  } finally {
    await runner.release();
  }
}

async function inTransaction<T>(query: Query, work: (query: Query) => Promise<T>): Promise<T> {
  await query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    return await work(query);
  } finally {
    await query('COMMIT');
  }
}

/** The latency bucket of a delivered row, as the books define it (accepted → delivered, negative as 0). */
const LATENCY_SQL = `width_bucket(GREATEST(EXTRACT(EPOCH FROM (d.delivered_at - e.created_at)) * 1000, 0), ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[])`;

const COUNTED_SQL = `
  SELECT g.granularity, date_trunc(g.granularity, r.created_at, 'UTC') AS bucket, r.status, count(*)::int AS events,
         CASE WHEN r.status = 'delivered'
              THEN ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, index) => `count(*) FILTER (WHERE r.latency = ${index})`).join(', ')}]::int[] END AS latency
    FROM (SELECT e.created_at, d.status::text AS status,
                 CASE WHEN d.status = 'delivered' AND d.delivered_at IS NOT NULL THEN ${LATENCY_SQL} END AS latency
            FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
           WHERE e.created_at >= $1::timestamptz AND e.created_at < $2::timestamptz) AS r
   CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
   GROUP BY 1, 2, 3`;

/** Every bucket the books hold something for in the window: folded rows, or entries not folded yet. */
const BOOKED_BUCKETS_SQL = `
  SELECT granularity, bucket_start AS bucket FROM event_tallies
   WHERE granularity IN ('minute', 'hour') AND bucket_start >= date_trunc(granularity, $1::timestamptz, 'UTC') AND bucket_start < $2::timestamptz
  UNION
  SELECT g.granularity, date_trunc(g.granularity, b.created_at, 'UTC') FROM book_entries b CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
   WHERE b.created_at >= $1::timestamptz AND b.created_at < $2::timestamptz`;

function key(tally: Pick<BucketTally, 'granularity' | 'bucket' | 'status'>): string {
  return `${tally.granularity} ${new Date(tally.bucket).toISOString()} ${tally.status}`;
}

function sorted(tallies: BucketTally[]): BucketTally[] {
  return [...tallies].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** What nets out to nothing is no tally (a status counted in and out again leaves a zero row until a prune). */
function nonZero(tally: BucketTally): boolean {
  return tally.events !== 0 || (tally.latency?.some((count) => count !== 0) ?? false);
}

/**
 * Both sides, bucket by bucket, for the events accepted in `window`: `tallied` from TALLIED_BUCKETS one
 * bucket at a time, `counted` from the rows.
 */
export async function booksAndCounts(db: BooksDatabase, window: BooksWindow = {}): Promise<{ tallied: BucketTally[]; counted: BucketTally[] }> {
  const since = window.since ?? new Date('1970-01-01T00:00:00Z');
  const until = window.until ?? new Date('9999-01-01T00:00:00Z');
  if (since.getTime() % GRANULARITIES.hour !== 0 || until.getTime() % GRANULARITIES.hour !== 0) throw new Error('a books window starts and ends on whole hours');
  return inOneSnapshot(db, async (query) => {
    const countedRows = (await query(COUNTED_SQL, [since, until])) as { granularity: Granularity; bucket: Date; status: string; events: number; latency: number[] | null }[];
    const counted = countedRows.map((row) => ({ granularity: row.granularity, bucket: row.bucket.getTime(), status: row.status, events: row.events, latency: row.latency }));
    const buckets = new Map<string, { granularity: Granularity; bucket: number }>();
    const booked = (await query(BOOKED_BUCKETS_SQL, [since, until])) as { granularity: Granularity; bucket: Date }[];
    for (const { granularity, bucket } of [...counted, ...booked.map((row) => ({ granularity: row.granularity, bucket: row.bucket.getTime() }))]) {
      buckets.set(`${granularity} ${bucket}`, { granularity, bucket });
    }
    const tallied: BucketTally[] = [];
    for (const { granularity, bucket } of buckets.values()) {
      const params = { granularity, since: new Date(bucket), until: new Date(bucket + GRANULARITIES[granularity]) };
      const rows = (await query(TALLIED_BUCKETS.text, TALLIED_BUCKETS.values(params))) as StatusTally[];
      for (const row of rows) {
        tallied.push({
          granularity,
          bucket,
          status: row.status,
          events: Number(row.events),
          latency: row.latency_counts === null ? null : row.latency_counts.map(Number),
        });
      }
    }
    return { tallied: sorted(tallied.filter(nonZero)), counted: sorted(counted) };
  });
}

/** Every minute's and hour's tally equals what the rows of that minute or hour say, status by status and latency bucket by bucket. */
export async function expectBooksToMatchRows(db: BooksDatabase, window: BooksWindow = {}): Promise<BucketTally[]> {
  const { tallied, counted } = await booksAndCounts(db, window);
  expect(tallied).toEqual(counted);
  return tallied;
}

/** The book entries not folded yet (of every account). */
export async function unfoldedEntries(db: BooksDatabase): Promise<number> {
  const sql = `SELECT count(*)::int AS entries FROM book_entries`;
  const rows = isClient(db) ? (await db.query<{ entries: number }>(sql)).rows : await db.query<{ entries: number }[]>(sql);
  return rows[0].entries;
}
