import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createDataSource, ensureDatabase, GenericPlanPool, isNotFinalSql, isPendingSql, runMigrations, seqAt } from '@app/persistence';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { DESTINATION_RECORD_SQL } from '../apps/delivery-worker/src/delivery/destination-delivery/destination-outcome-store';
import { type Outcome, OutcomeStore, RECORD_SQL } from '../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { LOAD_SQL } from '../apps/delivery-worker/src/delivery/loading/event-loader';
import { ERASED_SQL } from '../apps/delivery-worker/src/delivery/erasure-check';
import { type RunningApp, startApp } from './support/apps';
import { createAccount } from './support/fixtures';
import { attemptRows, customerEvents, deliveredRecordValues, eventRow, insertEvents, type StoredTestEvent, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('outcome-record-plan');

/**
 * The worker loads events and records outcomes under one plan per connection, kept for every call (GenericPlanPool). A
 * kept plan must stay right whatever the statistics said when it was made: it drops the days outside
 * the batch when it starts and finds each row by its primary key, never through the partial indexes
 * over pending rows (which, chosen while little was pending, would read a whole backlog on each call).
 */
describe('the load and the outcome record under their kept plans', () => {
  const databaseUrl = new URL(process.env.DATABASE_URL ?? '');
  databaseUrl.pathname = `${databaseUrl.pathname}_plans`;
  let appDataSource: DataSource;
  let pool: GenericPlanPool;
  let seqs: string[];

  beforeAll(async () => {
    await ensureDatabase(databaseUrl.toString());
    await runMigrations(databaseUrl.toString());
    appDataSource = await createDataSource(databaseUrl.toString(), { poolSize: 2 }).initialize();
    pool = new GenericPlanPool(appDataSource);
    const [{ id }] = await appDataSource.query<{ id: number }[]>(
      `INSERT INTO accounts (email, open_api_token, signing_secret) VALUES ('plans@example.com', 't', 's') RETURNING id`,
    );
    const rows = await appDataSource.query<{ seq: string }[]>(
      `INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at)
       SELECT 'plan-' || n, $1, 'Customer_create', '{}'::json, 'delivered', now() FROM generate_series(1, 2000) AS n
       RETURNING seq::text AS seq`,
      [id],
    );
    seqs = rows.map((row) => row.seq);
  });

  afterAll(async () => {
    await pool?.onApplicationShutdown();
    await appDataSource?.destroy();
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseUrl.pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
  });

  /** The kept plan of `text` after the events' day was analysed with every row in `status`. */
  async function keptPlanWith(status: string, text: string, values: unknown[]): Promise<string[]> {
    await appDataSource.query(`UPDATE events SET status = $1`, [status]);
    const [{ partition }] = await appDataSource.query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM events LIMIT 1`);
    await appDataSource.query(`ANALYZE ${partition}`);
    return pool.keptPlan(text, values);
  }

  it('runs on connections that keep one generic plan per statement', async () => {
    const [row] = await pool.query<{ mode: string }>('plan-cache-mode', `SELECT current_setting('plan_cache_mode') AS mode`, []);
    expect(row.mode).toBe('force_generic_plan');
  });

  it('keeps forcing them when the database URL carries options of its own', async () => {
    const withOptions = new URL(databaseUrl);
    withOptions.searchParams.set('options', '-c search_path=public');
    const ownPool = new GenericPlanPool(createDataSource(withOptions.toString()));
    try {
      const [row] = await ownPool.query<{ mode: string; path: string }>(
        'plan-cache-mode-and-path',
        `SELECT current_setting('plan_cache_mode') AS mode, current_setting('search_path') AS path`,
        [],
      );
      expect(row).toEqual({ mode: 'force_generic_plan', path: 'public' });
    } finally {
      await ownPool.onApplicationShutdown();
    }
  });

  it.each([
    ['nothing', 'delivered'],
    ['everything', 'queued'],
  ])('reads the batch by primary key from its day alone when the statistics say %s is pending', async (_, status) => {
    const plan = await keptPlanWith(status, RECORD_SQL, deliveredRecordValues(seqs[0]));
    const eventScans = plan.filter((line) => /Scan.* on events_/.test(line));
    expect(eventScans).toEqual([expect.stringMatching(/^-> +Index Scan using events_p\d{8}_pkey on events_p\d{8} /)]);
    // Today, the days created ahead and the default partition: all but the batch's day dropped at start.
    expect(plan).toContainEqual(expect.stringMatching(/^Subplans Removed: ([1-9]\d*)$/));
  });

  it('would read the pending index with the guard spelled as the pending predicate (what the key-only guard prevents)', async () => {
    const plan = await keptPlanWith('delivered', RECORD_SQL.replace(isNotFinalSql('e'), isPendingSql('e')), deliveredRecordValues(seqs[0]));
    expect(plan.filter((line) => /Scan.* on events_/.test(line)).join('\n')).not.toMatch(/_pkey/);
  });

  it.each([
    ['load', LOAD_SQL],
    ['erasure check', ERASED_SQL],
  ])('reads the events of a batch for its %s by primary key from their day alone', async (_, text) => {
    const plan = await keptPlanWith('queued', text, [[seqs[0], seqs[1]], seqs[0], seqs[1]]);
    expect(plan.filter((line) => /Scan.* on events_/.test(line))).toEqual([expect.stringMatching(/^(-> +)?Index Scan using events_p\d{8}_pkey on events_p\d{8} /)]);
    expect(plan).toContainEqual(expect.stringMatching(/^Subplans Removed: ([1-9]\d*)$/));
  });

  it('reads a destination delivery by primary key from its day alone', async () => {
    const plan = await pool.keptPlan(DESTINATION_RECORD_SQL, deliveredRecordValues(seqs[0], 'dst_plan'));
    expect(plan.filter((line) => /Scan.* on destination_deliveries_/.test(line))).toEqual([
      expect.stringMatching(/^-> +Index Scan using destination_deliveries_p\d{8}_pkey on destination_deliveries_p\d{8} /),
    ]);
    expect(plan).toContainEqual(expect.stringMatching(/^Subplans Removed: ([1-9]\d*)$/));
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

  function delivered(event: StoredTestEvent): Outcome {
    const now = new Date();
    return {
      attempt: {
        eventSeq: event.seq,
        series: 0,
        attempt: 1,
        startedAt: now,
        durationMs: 4,
        url: 'http://127.0.0.1:9/hook',
        requestHeaders: {},
        requestBody: '{}',
        responseStatus: 200,
        responseHeaders: {},
        responseBody: 'ok',
        error: null,
      },
      change: { seq: event.seq, series: 0, seriesAttempts: 0, status: 'delivered', attempted: 1, nextAttemptAt: null, deliveredAt: now, lastError: null },
    };
  }

  it('records events of today and of a day three weeks back in the same statement', async () => {
    const accountId = (await createAccount(configApi)).id;
    const [first, today, latest] = await insertEvents(worker.app, accountId, customerEvents(3));
    // An event stored three weeks ago lives in another partition (the legacy one or the default).
    const oldSeq = (seqAt(Date.now() - 21 * 86_400_000) + BigInt(process.pid)).toString();
    const [{ partition }] = await worker.app.get(DataSource).query<{ partition: string }[]>(
      `INSERT INTO events (seq, event_id, account_id, action, message, status, next_attempt_at)
       VALUES ($1, $2, $3, 'Customer_create', '{}'::json, 'queued', now()) RETURNING tableoid::regclass::text AS partition`,
      [oldSeq, `old-${oldSeq}`, accountId],
    );
    const old: StoredTestEvent = { ...today, seq: oldSeq, eventId: `old-${oldSeq}` };
    expect(partition).not.toBe((await eventPartition(worker, today.seq)).partition);

    const store = worker.app.get(OutcomeStore, { strict: false });
    // The first occupies the writer, so the other three go out together: bounds from three weeks ago to now.
    const applied = await Promise.all([first, old, today, latest].map((event) => store.record(delivered(event))));
    expect(applied).toEqual([true, true, true, true]);
    for (const event of [first, old, today, latest]) {
      expect(await eventRow(worker.app, event.eventId)).toMatchObject({ status: 'delivered', attempts: 1, series_attempts: 1 });
      expect((await attemptRows(worker.app, event.eventId)).map((attempt) => attempt.response_status)).toEqual([200]);
    }
  });
});

async function eventPartition(app: RunningApp, seq: string): Promise<{ partition: string }> {
  const [row] = await app.app.get(DataSource).query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM events WHERE seq = $1`, [seq]);
  return row;
}
