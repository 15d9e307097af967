import type { DataSource } from 'typeorm';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS } from '@app/persistence';

interface TallyRow {
  granularity: string;
  bucket: string;
  status: string;
  events: number;
  latency_counts: number[] | null;
}

function latencyHistogramSql(): string {
  return `CASE WHEN e.status = 'delivered' THEN ARRAY[${Array.from(
    { length: LATENCY_BUCKETS },
    (_, index) => `count(*) FILTER (WHERE latency = ${index})`,
  ).join(', ')}]::int[] END`;
}

/** One connection's queries, whatever the client: a TypeORM query runner or a pg Client. */
export type OneConnection = (sql: string) => Promise<unknown[]>;

/**
 * The tallies and a count of the rows themselves, read in one snapshot, so the comparison holds exactly
 * while other suites write to the shared database: triggers change both in the same transaction.
 */
export async function talliesAndCounts(db: DataSource | OneConnection): Promise<{ tallied: TallyRow[]; counted: TallyRow[] }> {
  if (typeof db !== 'function') {
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      return await talliesAndCounts((sql) => runner.query(sql) as Promise<unknown[]>);
    } finally {
      await runner.release();
    }
  }
  await db('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const tallied = (await db(
      `SELECT granularity, bucket_start::text AS bucket, status, sum(events)::int AS events,
              sum_latency_counts(latency_counts)::int[] AS latency_counts
         FROM event_tallies GROUP BY granularity, bucket_start, status
       HAVING sum(events) <> 0 OR NOT COALESCE(0 = ALL (sum_latency_counts(latency_counts)), true)
        ORDER BY granularity, bucket_start, status`,
    )) as TallyRow[];
    const counted = (await db(
      `SELECT g.granularity, date_trunc(g.granularity, e.created_at, 'UTC')::text AS bucket, e.status, count(*)::int AS events,
              ${latencyHistogramSql()} AS latency_counts
         FROM (SELECT created_at, status::text AS status,
                      CASE WHEN status = 'delivered' AND delivered_at IS NOT NULL
                           THEN width_bucket(GREATEST(EXTRACT(EPOCH FROM (delivered_at - created_at)) * 1000, 0),
                                             ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[]) END AS latency
                 FROM events) AS e
        CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3`,
    )) as TallyRow[];
    return { tallied, counted };
  } finally {
    await db('COMMIT');
  }
}

/** Every minute's and hour's tally equals what the events of that minute or hour say, status by status and latency bucket by bucket. */
export async function expectTalliesToMatchEvents(db: DataSource | OneConnection): Promise<void> {
  const { tallied, counted } = await talliesAndCounts(db);
  expect(tallied).toEqual(counted);
}
