import type { DataSource } from 'typeorm';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS } from '@app/persistence/testing';

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

/** The latency bucket of a delivered event, as the books compute it (latencyBucketSql). */
function latencyBucketOf(deliveredAt: string, createdAt: string): string {
  return `width_bucket(GREATEST(EXTRACT(EPOCH FROM (${deliveredAt} - ${createdAt})) * 1000, 0), ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[])`;
}

interface EntrySide {
  granularity: string;
  bucket: string;
  status: string;
  delta: number;
  latency: number | null;
}

/** Adds the book entries not folded yet and the events not counted yet to the folded tallies, bucket by bucket (as TALLIED_BUCKETS reads them). */
function withEntries(folded: TallyRow[], sides: EntrySide[]): TallyRow[] {
  const rows = new Map(folded.map((row) => [`${row.granularity}|${row.bucket}|${row.status}`, { ...row, latency_counts: row.latency_counts ? [...row.latency_counts] : null }]));
  for (const side of sides) {
    const key = `${side.granularity}|${side.bucket}|${side.status}`;
    const row = rows.get(key) ?? { granularity: side.granularity, bucket: side.bucket, status: side.status, events: 0, latency_counts: null };
    row.events += side.delta;
    if (side.status === 'delivered') {
      row.latency_counts ??= new Array<number>(LATENCY_BUCKETS).fill(0);
      if (side.latency !== null) row.latency_counts[side.latency] += side.delta;
    }
    rows.set(key, row);
  }
  return inOrder([...rows.values()].filter((row) => row.events !== 0 || (row.latency_counts ?? []).some((count) => count !== 0)));
}

/** Rows by granularity, bucket and status, in one order for both sides of the comparison. */
function inOrder(rows: TallyRow[]): TallyRow[] {
  const order = (row: TallyRow) => `${row.granularity}|${row.bucket}|${row.status}`;
  return rows.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/**
 * The tallies (folded, plus the book entries the worker has not folded yet) and a count of the events
 * themselves by their primary delivery's status, read in one snapshot, so the comparison holds exactly
 * while other suites write to the shared database: the statements that change a status append its
 * book entry in the same transaction.
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
    const folded = (await db(
      `SELECT granularity, bucket_start::text AS bucket, status, sum(events)::int AS events,
              sum_latency_counts(latency_counts)::int[] AS latency_counts
         FROM event_tallies GROUP BY granularity, bucket_start, status
        ORDER BY granularity, bucket_start, status`,
    )) as TallyRow[];
    const sides = (await db(
      `SELECT g.granularity, date_trunc(g.granularity, b.created_at, 'UTC')::text AS bucket, s.status, s.delta,
              CASE WHEN s.status = 'delivered' AND b.delivered_at IS NOT NULL THEN ${latencyBucketOf('b.delivered_at', 'b.created_at')} END AS latency
         FROM book_entries b
        CROSS JOIN LATERAL (VALUES (b.from_status, -b.events), (b.to_status, b.events)) AS s(status, delta)
        CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
        WHERE s.status IS NOT NULL AND b.from_status IS DISTINCT FROM b.to_status
       UNION ALL
       SELECT g.granularity, date_trunc(g.granularity, e.created_at, 'UTC')::text, d.first_status, 1, NULL
         FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
        CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
        WHERE e.seq >= (SELECT counted_below FROM book_marks) AND d.first_status IS NOT NULL`,
    )) as EntrySide[];
    const counted = (await db(
      `SELECT g.granularity, date_trunc(g.granularity, e.created_at, 'UTC')::text AS bucket, e.status, count(*)::int AS events,
              ${latencyHistogramSql()} AS latency_counts
         FROM (SELECT ev.created_at, d.status::text AS status,
                      CASE WHEN d.status = 'delivered' AND d.delivered_at IS NOT NULL THEN ${latencyBucketOf('d.delivered_at', 'ev.created_at')} END AS latency
                 FROM events ev JOIN deliveries d ON d.event_seq = ev.seq AND d.destination_id = 'primary') AS e
        CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3`,
    )) as TallyRow[];
    return { tallied: withEntries(folded, sides), counted: inOrder(counted) };
  } finally {
    await db('COMMIT');
  }
}

/** Every minute's and hour's tally equals what the events of that minute or hour say, status by status and latency bucket by bucket. */
export async function expectTalliesToMatchEvents(db: DataSource | OneConnection): Promise<void> {
  const { tallied, counted } = await talliesAndCounts(db);
  expect(tallied).toEqual(counted);
}
