import { DataSource } from 'typeorm';
import {
  createDataSource,
  DAY_MS,
  ensureDatabase,
  GenericPlanPool,
  LOAD_DELIVERIES,
  RECORD_OUTCOMES,
  recordOutcomesParams,
  runMigrations,
  seqAt,
  seqRange,
  Sql,
  utcDayStart,
} from '@app/persistence/testing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { OutcomeStore } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { ERASED_SQL } from '../../apps/delivery-worker/src/delivery/erasure-check';
import { type RunningApp, startApp } from '../support/apps';
import { deliveredOutcome, deliveryRowsOf } from '../support/deliveries';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { dropDatabase } from '../support/worker-databases';
import { attemptRows, customerEvents, eventRow, insertEvents, type StoredTestEvent, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('outcome-record-plan');

/** The columns an outcome sets (RECORD_OUTCOMES): no index of `deliveries` may name one, or its updates stop being HOT. */
const COLUMNS_AN_OUTCOME_SETS = ['status', 'attempts', 'series_attempts', 'next_attempt_at', 'delivered_at', 'last_error', 'updated_at'];

/**
 * The worker loads deliveries and records outcomes under one plan per connection, kept for every call
 * (GenericPlanPool). A kept plan must stay right whatever the statistics said when it was made: it
 * drops the days outside the batch when it starts and finds each row by its primary key. And since no
 * index of `deliveries` names a column an outcome changes, every outcome is a HOT update.
 */
describe('the load and the outcome record under their kept plans', () => {
  const databaseUrl = new URL(process.env.DATABASE_URL ?? '');
  databaseUrl.pathname = `${databaseUrl.pathname}_plans`;
  let appDataSource: DataSource;
  let pool: GenericPlanPool;
  let accountId: number;
  let seqs: string[];
  let createdAt: Date;

  beforeAll(async () => {
    await ensureDatabase(databaseUrl.toString());
    await runMigrations(databaseUrl.toString());
    appDataSource = await createDataSource(databaseUrl.toString(), { poolSize: 2 }).initialize();
    pool = new GenericPlanPool(appDataSource);
    [{ id: accountId }] = await appDataSource.query<{ id: number }[]>(`INSERT INTO accounts (email, open_api_token) VALUES ('plans@example.com', 't') RETURNING id`);
    // Today's events with their primary deliveries, as ingest's statement leaves them (books are not this file's concern).
    const rows = await appDataSource.query<{ seq: string; created_at: Date }[]>(
      `WITH inserted AS (
         INSERT INTO events (event_id, account_id, action, message)
         SELECT 'plan-' || n, $1, 'Customer_create', '{}'::json FROM generate_series(1, 2000) AS n
         RETURNING seq, created_at
       ),
       delivering AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, next_attempt_at) SELECT seq, 'primary', $1, 'queued', created_at FROM inserted
       )
       SELECT seq::text AS seq, created_at FROM inserted ORDER BY seq`,
      [accountId],
    );
    seqs = rows.map((row) => row.seq);
    createdAt = rows[0].created_at;
  });

  afterAll(async () => {
    await pool?.onApplicationShutdown();
    await appDataSource?.destroy();
    await dropDatabase(databaseUrl.toString());
  });

  async function partitionOf(table: 'events' | 'deliveries', seq: string): Promise<string> {
    const key = table === 'events' ? 'seq' : 'event_seq';
    const [{ partition }] = await appDataSource.query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM ${table} WHERE ${key} = $1 LIMIT 1`, [seq]);
    return partition;
  }

  /** The kept plan of `text` after the day's deliveries were analysed with every one in `status`. */
  async function keptPlanWith(status: string, text: string, values: unknown[]): Promise<string[]> {
    await appDataSource.query(`UPDATE deliveries SET status = $1`, [status]);
    await appDataSource.query(`ANALYZE ${await partitionOf('deliveries', seqs[0])}`);
    await appDataSource.query(`ANALYZE ${await partitionOf('events', seqs[0])}`);
    return pool.keptPlan(text, values);
  }

  /**
   * The plan reads `table` from one partition only, the batch's own day, through its primary key (an
   * index scan, or a bitmap of it): never a sequential scan, another day or another index.
   */
  function expectKeyScansOfItsDay(plan: string[], table: 'events' | 'deliveries', day: string): void {
    const scans = plan.filter((line) => new RegExp(`Scan.* on ${table}_`).test(line));
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect(scan).toMatch(
        new RegExp(`^(-> +)?(Index (Only )?Scan using ${day}_pkey on ${day} |Bitmap Heap Scan on ${day} |Bitmap Index Scan on ${day}_pkey$)`),
      );
    }
  }

  it('runs on connections that keep one generic plan per statement', async () => {
    const [row] = await pool.query<{ mode: string }>('plan-cache-mode', `SELECT current_setting('plan_cache_mode') AS mode`, []);
    expect(row.mode).toBe('force_generic_plan');
  });

  it.each([
    ['nothing', 'delivered'],
    ['everything', 'queued'],
  ])('records a batch by primary key from its day alone when the statistics say %s is pending', async (_, status) => {
    const plan = await keptPlanWith(status, RECORD_OUTCOMES.text, RECORD_OUTCOMES.values(recordOutcomesParams([deliveredOutcome(seqs[0], accountId, createdAt)])));
    expectKeyScansOfItsDay(plan, 'deliveries', await partitionOf('deliveries', seqs[0]));
    // Today, the days created ahead and the default partition: all but the batch's day dropped at start.
    expect(plan).toContainEqual(expect.stringMatching(/^Subplans Removed: ([1-9]\d*)$/));
  });

  it.each([
    ['nothing', 'delivered'],
    ['everything', 'queued'],
  ])('loads a batch of deliveries with their events by primary key from their day alone when the statistics say %s is pending', async (_, status) => {
    const keys = [seqs[0], seqs[1]];
    const [lowSeq, highSeq] = seqRange(keys);
    const plan = await keptPlanWith(status, LOAD_DELIVERIES.text, LOAD_DELIVERIES.values({ seqs: keys, destinationIds: ['primary', 'primary'], lowSeq, highSeq }));
    expectKeyScansOfItsDay(plan, 'deliveries', await partitionOf('deliveries', seqs[0]));
    expectKeyScansOfItsDay(plan, 'events', await partitionOf('events', seqs[0]));
    expect(plan.filter((line) => /^Subplans Removed: ([1-9]\d*)$/.test(line))).toHaveLength(2);
  });

  it('reads the events of a batch for its erasure check by primary key from their day alone', async () => {
    const plan = await pool.keptPlan(ERASED_SQL, [[seqs[0], seqs[1]], seqs[0], seqs[1]]);
    expectKeyScansOfItsDay(plan, 'events', await partitionOf('events', seqs[0]));
    expect(plan).toContainEqual(expect.stringMatching(/^Subplans Removed: ([1-9]\d*)$/));
  });

  it('has no index of deliveries name a column an outcome sets: the primary key alone', async () => {
    const indexes = await appDataSource.query<{ table: string; primary: boolean; columns: string[]; whole: boolean }[]>(
      `SELECT i.indrelid::regclass::text AS table, i.indisprimary AS primary,
              ARRAY(SELECT a.attname::text FROM unnest(i.indkey) AS k(n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY a.attnum) AS columns,
              i.indexprs IS NULL AND i.indpred IS NULL AS whole
         FROM pg_index i
        WHERE i.indrelid IN (SELECT 'deliveries'::regclass UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = 'deliveries'::regclass)
        ORDER BY 1`,
    );
    const tables = await appDataSource.query<{ table: string }[]>(
      `SELECT 'deliveries' AS table UNION ALL SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = 'deliveries'::regclass ORDER BY 1`,
    );
    // One index per table, its primary key over the delivery's key; no expression or predicate that could read a changed column.
    expect(indexes).toEqual(tables.map(({ table }) => ({ table, primary: true, columns: ['event_seq', 'destination_id'], whole: true })));
    for (const index of indexes) expect(index.columns.filter((column) => COLUMNS_AN_OUTCOME_SETS.includes(column))).toEqual([]);
  });

  it('makes every outcome a HOT update of its delivery', async () => {
    // Deliveries of a day of their own (tomorrow's partition, made ahead), updated by nothing but the record below.
    const tomorrow = utcDayStart(Date.now()) + DAY_MS;
    const rows = await appDataSource.query<{ seq: string; created_at: Date }[]>(
      `WITH inserted AS (
         INSERT INTO events (seq, event_id, account_id, action, message)
         SELECT $2::bigint + n, 'hot-' || n, $1, 'Customer_create', '{}'::json FROM generate_series(1, 400) AS n
         RETURNING seq, created_at
       ),
       delivering AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, next_attempt_at) SELECT seq, 'primary', $1, 'queued', created_at FROM inserted
       )
       SELECT seq::text AS seq, created_at FROM inserted ORDER BY seq`,
      [accountId, seqAt(tomorrow + 3_600_000).toString()],
    );
    const partition = await partitionOf('deliveries', rows[0].seq);
    expect(partition).not.toBe(await partitionOf('deliveries', seqs[0]));

    // A batch of outcomes as the worker writes it, through its statement and its kept plan: a few
    // deliveries of each page (the fill factor leaves room for their new versions on the same page).
    const recorded = rows.filter((_, index) => index % 10 === 0);
    const sql = new Sql(appDataSource, pool);
    const applied = await sql.rows(RECORD_OUTCOMES, recordOutcomesParams(recorded.map((row) => deliveredOutcome(row.seq, accountId, row.created_at))));
    expect(applied).toHaveLength(recorded.length);

    // The kept-plan connection reports its statistics once idle (a few seconds at most).
    const counted = await waitFor(
      'the record to reach the statistics',
      async () => {
        const [now] = await appDataSource.query<{ updates: number; hot: number }[]>(
          `SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relid = $1::regclass`,
          [partition],
        );
        return now.updates >= recorded.length ? now : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(counted).toEqual({ updates: recorded.length, hot: recorded.length });
  });
});

describe('one batch of outcomes over several days', () => {
  let configApi: RunningApp;
  let worker: RunningApp;

  beforeAll(async () => {
    [configApi, worker] = await Promise.all([startApp(ConfigApiModule), startApp(DeliveryWorkerModule, { RECONCILE_INTERVAL: '1h' })]);
  });

  afterAll(async () => {
    await Promise.all([worker?.close(), configApi?.close()]);
  });

  async function acceptedAt(seq: string): Promise<Date> {
    const [row] = await worker.app.get(DataSource).query<{ created_at: Date }[]>(`SELECT created_at FROM events WHERE seq = $1`, [seq]);
    return row.created_at;
  }

  it('records deliveries of today and of a day three weeks back in the same statement', async () => {
    const accountId = (await createAccount(configApi)).id;
    // A push URL and the permission, so ingest's statement stores the primary's deliveries queued (no job is added).
    await setCallbackSettings(worker.app, accountId, { pushUrl: 'http://127.0.0.1:9/hook', contentType: 'JSON', permissions: 'all' });
    const [first, today, latest] = await insertEvents(worker.app, accountId, customerEvents(3));
    // An event stored three weeks ago lives in other partitions (the legacy ones or the default ones), its delivery too.
    const oldSeq = (seqAt(Date.now() - 21 * 86_400_000) + BigInt(process.pid)).toString();
    const dataSource = worker.app.get(DataSource);
    const [{ partition }] = await dataSource.query<{ partition: string }[]>(
      `WITH inserted AS (
         INSERT INTO events (seq, event_id, account_id, action, message) VALUES ($1, $2, $3, 'Customer_create', '{}'::json)
         RETURNING seq, tableoid::regclass::text AS partition
       ),
       delivering AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, next_attempt_at) SELECT seq, 'primary', $3, 'queued', now() FROM inserted
       )
       SELECT partition FROM inserted`,
      [oldSeq, `old-${oldSeq}`, accountId],
    );
    const old: StoredTestEvent = { ...today, seq: oldSeq, eventId: `old-${oldSeq}` };
    const [{ partition: todays }] = await dataSource.query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM events WHERE seq = $1`, [today.seq]);
    expect(partition).not.toBe(todays);

    const store = worker.app.get(OutcomeStore, { strict: false });
    const outcomes = await Promise.all([first, old, today, latest].map(async (event) => deliveredOutcome(event.seq, accountId, await acceptedAt(event.seq))));
    // The first occupies the writer, so the other three go out together: bounds from three weeks ago to now.
    const applied = await Promise.all(outcomes.map((outcome) => store.record(outcome)));
    expect(applied).toEqual([true, true, true, true]);
    for (const event of [first, old, today, latest]) {
      expect(await eventRow(worker.app, event.eventId)).toMatchObject({ status: 'delivered', attempts: 1, series_attempts: 1 });
      expect((await attemptRows(worker.app, event.eventId)).map((attempt) => attempt.response_status)).toEqual([200]);
    }
    expect(await deliveryRowsOf(worker.app, [oldSeq], 'primary')).toMatchObject([{ status: 'delivered', attempts: 1 }]);
  });
});
