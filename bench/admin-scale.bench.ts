import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, GenericPlanPool, LATENCY_BOUNDS_MS, LATENCY_BUCKETS, runMigrations, Sql } from '@app/persistence/testing';
import { type Environment, loadDatabaseSettings } from '@app/runtime';
import { pageAccountIds } from '../apps/config-api/src/admin/accounts/account-list';
import { AdminEventsService } from '../apps/config-api/src/admin/events/admin-events.service';
import { StatsSeriesService } from '../apps/config-api/src/admin/stats/stats-series.service';

/**
 * `npm run bench:admin`: the operators' calls on a log of millions of events, each against the scan it
 * replaces, in a database of its own (created, seeded with generate_series, dropped). Sizes:
 * ADMIN_SCALE_EVENTS (default 2,000,000 events over 7 days: 85 % delivered at the first attempt, 10 % failed
 * after 3, 5 % filtered) and
 * ADMIN_SCALE_ACCOUNTS (default 50,000; events go to the first 5,000). Per-account minute rollups are
 * seeded for the last day only (what the 1m series reads); everything else in full. Times are medians of several runs; ratios are what to compare.
 */
const EVENTS = Number(process.env.ADMIN_SCALE_EVENTS ?? 2_000_000);
const ACCOUNTS = Number(process.env.ADMIN_SCALE_ACCOUNTS ?? 50_000);
/** Accounts the events belong to (the rest exist for the account search). */
const ACTIVE_ACCOUNTS = Math.min(ACCOUNTS, 5_000);
const DAYS = 7;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function median(runs: number, work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function timed(what: string, work: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await work();
  say(`  ${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function compare(name: string, fast: number, slow: number, slowName: string): void {
  say(`  ${name.padEnd(46)} ${fast.toFixed(1).padStart(8)} ms   ${slowName}: ${slow.toFixed(1).padStart(8)} ms   ratio ${(slow / fast).toFixed(0)}x`);
}

async function seed(db: DataSource): Promise<void> {
  say(`seeding ${ACCOUNTS.toLocaleString('en-US')} accounts and ${EVENTS.toLocaleString('en-US')} events over ${DAYS} days`);
  await timed('accounts', () =>
    db.query(
      `INSERT INTO accounts (email, name, open_api_token, signing_secret)
       SELECT 'user' || i || '@company' || (i % 997) || '.example.com', 'Company ' || i, 'token', 'secret' FROM generate_series(1, $1::int) AS i`,
      [ACCOUNTS],
    ),
  );
  // Bulk loading: the message index is built once afterwards and event keys are claimed in one
  // statement, instead of row by row (the trigger) as ingest does.
  await db.query('DROP INDEX IF EXISTS events_message_search_idx');
  const triggers = await db.query<{ tgname: string }[]>(
    `SELECT tgname FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal`,
  );
  for (const { tgname } of triggers) await db.query(`ALTER TABLE events DISABLE TRIGGER ${tgname}`);
  // seq follows created_at as the time-ordered seq would, so rows land where real ones would.
  await timed('events', () =>
    db.query(
      `INSERT INTO events (seq, event_id, account_id, action, message, status, attempts, created_at, updated_at, delivered_at)
       SELECT (floor(extract(epoch FROM t.created_at) * 1000)::bigint << 20) | (i & 1048575), 'evt_scale_' || i, 1 + i % $2::int,
              'Customer_create',
              json_build_object('id', i, 'customer_id', (i::bigint * 7919) % 500000, 'nick_name', 'nick ' || (i % 9973),
                                'sub_session_id', 'ss_' || md5((i % 200000)::text),
                                'im', json_build_object('channel', 'web', 'visitor', i % 100000),
                                'content', 'hello, I would like to ask about order ' || (i % 77777) || ' please'),
              t.status, CASE t.status WHEN 'delivered' THEN 1 WHEN 'failed' THEN 3 ELSE 0 END, t.created_at,
              t.created_at + interval '90 seconds', CASE WHEN t.status = 'delivered' THEN t.created_at + (i % 2000) * interval '1 ms' END
         FROM generate_series(1, $1::int) AS i
        CROSS JOIN LATERAL (SELECT now() - interval '${DAYS} days' + i * (interval '${DAYS} days' / $1::int) AS created_at,
                                   CASE WHEN i % 20 < 17 THEN 'delivered' WHEN i % 20 < 19 THEN 'failed' ELSE 'filtered' END AS status) AS t`,
      [EVENTS, ACTIVE_ACCOUNTS],
    ),
  );
  for (const { tgname } of triggers) await db.query(`ALTER TABLE events ENABLE TRIGGER ${tgname}`);
  if (triggers.length > 0) {
    await timed('event keys', () => db.query(`INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM events WHERE event_id LIKE 'evt_scale_%'`));
  }
  await timed('message search index (CREATE INDEX)', () =>
    db.query('CREATE INDEX events_message_search_idx ON events USING gin ((message::jsonb))'),
  );
  await timed('attempts', () =>
    db.query(
      `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status, error)
       SELECT e.seq, 0, n, e.created_at + (n - 1) * interval '30 seconds', 40 + e.seq % 200, 'https://receiver.example.com/hook', '{}',
              '{"action":"Customer_create"}', CASE WHEN e.status = 'delivered' THEN 200 ELSE 503 END, NULL
         FROM events e CROSS JOIN LATERAL generate_series(1, e.attempts) AS n`,
    ),
  );
  // What the worker's batches would have written, summed once from the seeded log.
  const histogram = Array.from({ length: LATENCY_BUCKETS }, (_, index) => `count(*) FILTER (WHERE e.status = 'delivered' AND b = ${index})`).join(', ');
  await timed('rollups', () =>
    db.query(
      `INSERT INTO delivery_rollups (granularity, account_id, bucket_start, delivered, failed, attempts, failed_attempts, latency_counts)
       SELECT g.granularity, s.account_id, date_trunc(g.granularity, e.updated_at, 'UTC'),
              count(*) FILTER (WHERE e.status = 'delivered'), count(*) FILTER (WHERE e.status = 'failed'), sum(e.attempts),
              COALESCE(sum(e.attempts) FILTER (WHERE e.status <> 'delivered'), 0), ARRAY[${histogram}]::bigint[]
         FROM (SELECT *, width_bucket(EXTRACT(EPOCH FROM delivered_at - created_at) * 1000, ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[]) AS b
                 FROM events WHERE status IN ('delivered', 'failed')) AS e
        CROSS JOIN LATERAL (VALUES (e.account_id), (0)) AS s(account_id)
        CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
        WHERE g.granularity = 'hour' OR s.account_id = 0 OR e.updated_at >= now() - interval '1 day'
        GROUP BY 1, 2, 3`,
    ),
  );
  await timed('analyze', () => db.query('ANALYZE'));
}

/** The series as a live query would compute it: attempts from the attempt log, outcomes and latency from events. */
async function scanSeries(db: DataSource, unit: string, since: Date, accountId: number | null): Promise<void> {
  await Promise.all([
    db.query(
      `SELECT date_trunc($1, a.started_at, 'UTC') AS t, count(*), count(*) FILTER (WHERE a.response_status IS NULL OR a.response_status >= 300)
         FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq
        WHERE a.started_at >= $2 AND ($3::int IS NULL OR e.account_id = $3) GROUP BY 1`,
      [unit, since, accountId],
    ),
    db.query(
      `SELECT date_trunc($1, updated_at, 'UTC') AS t, count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'failed'),
              percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY delivered_at - created_at)
         FROM events WHERE updated_at >= $2 AND status IN ('delivered', 'failed') AND ($3::int IS NULL OR account_id = $3) GROUP BY 1`,
      [unit, since, accountId],
    ),
  ]);
}

async function measure(db: DataSource): Promise<void> {
  const sql = new Sql(db, new GenericPlanPool(db));
  // The event view reads PUBLIC_URL only to rebuild request bodies, which the list never does.
  const events = new AdminEventsService(db, sql, { publicUrl: '' } as Environment);
  const series = new StatsSeriesService(sql);
  const now = Date.now();
  say('\nstats series (rollups vs the same numbers computed from events and attempts)');
  for (const [bucket, unit, spanMs] of [['1m', 'minute', 3_600_000], ['1h', 'hour', 86_400_000], ['1d', 'day', DAYS * 86_400_000]] as const) {
    for (const accountId of [null, 42]) {
      const since = new Date(now - spanMs);
      const fast = await median(5, () => series.series({ bucket, since: since.toISOString(), ...(accountId ? { account_id: accountId } : {}) }));
      const slow = await median(1, () => scanSeries(db, unit, since, accountId));
      compare(`${bucket} over ${spanMs / 3_600_000} h, ${accountId ? 'one account' : 'all accounts'}`, fast, slow, 'scan');
    }
  }

  say('\nq: search inside messages (GIN index vs the same filter as a scan)');
  for (const [label, q, days] of [['customer_id 123457 (4 events)', '123457', DAYS], ['sub_session_id (10 events)', 'ss_fe7ecc4de28b2c83c016b5c6c2acd826', DAYS], ['"web" (every event), 1 day', 'web', 1]] as const) {
    const since = new Date(now - days * 86_400_000).toISOString();
    const fast = await median(5, () => events.list({ q, since }));
    const slow = await median(1, () =>
      db.query(
        `SELECT seq FROM events WHERE created_at >= $1 AND jsonb_path_exists(message::jsonb, $2::jsonpath) ORDER BY seq DESC LIMIT 51`,
        [since, `$.** ? (@ == ${JSON.stringify(q)}${/^\d+$/.test(q) ? ` || @ == ${q}` : ''})`],
      ),
    );
    compare(label, fast, slow, 'scan');
  }

  say('\naccount search (trigram GIN vs a scan)');
  for (const search of ['user4242@', 'company13.example', 'Company 49999']) {
    const fast = await median(5, () => pageAccountIds(db, { search }));
    const slow = await median(3, () =>
      db.transaction(async (manager) => {
        await manager.query('SET LOCAL enable_bitmapscan = off');
        await manager.query(
          `SELECT id FROM accounts WHERE lower(email) LIKE $1 OR lower(name) LIKE $1 ORDER BY created_at DESC, id DESC LIMIT 51`,
          [`%${search.toLowerCase()}%`],
        );
      }),
    );
    compare(`"${search}" in ${ACCOUNTS.toLocaleString('en-US')} accounts`, fast, slow, 'scan');
  }

  say('\ningest insert cost with and without the message search index (200 batches of 500 events)');
  let batch = 0;
  const insertBatches = () =>
    median(1, async () => {
      for (let round = 0; round < 200; round += 1) {
        batch += 1;
        await db.query(
          `INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at)
           SELECT 'evt_ins_' || $1::int || '_' || i, 1 + i % 1000, 'Customer_create',
                  json_build_object('id', i, 'customer_id', i * 31, 'nick_name', 'nick ' || i, 'sub_session_id', 'ss_' || md5(i::text),
                                    'im', json_build_object('channel', 'web', 'visitor', i), 'content', 'hello ' || i),
                  'queued', now()
             FROM generate_series(1, 500) AS i`,
          [batch],
        );
      }
    });
  const withIndex = await insertBatches();
  await db.query('DROP INDEX events_message_search_idx');
  const withoutIndex = await insertBatches();
  say(`  with the index ${withIndex.toFixed(0)} ms, without ${withoutIndex.toFixed(0)} ms: ${(withIndex / withoutIndex).toFixed(2)}x (${((withIndex - withoutIndex) / 100_000).toFixed(3)} ms more per event)`);
}

async function main(): Promise<void> {
  const base = new URL(loadDatabaseSettings().url);
  const databaseName = `callbacks_scale_${process.pid}`;
  const maintenance = new URL(base.toString());
  maintenance.pathname = '/postgres';
  const target = new URL(base.toString());
  target.pathname = `/${databaseName}`;
  const admin = new Client({ connectionString: maintenance.toString() });
  await admin.connect();
  let db: DataSource | null = null;
  try {
    await runMigrations(target.toString());
    // Bulk loading and index builds with memory to match (this database only; it is dropped at the end).
    await admin.query(`ALTER DATABASE "${databaseName}" SET work_mem = '256MB'`);
    await admin.query(`ALTER DATABASE "${databaseName}" SET maintenance_work_mem = '512MB'`);
    db = createDataSource(target.toString(), { poolSize: 4, queryTimeoutMs: 0 });
    await db.initialize();
    await seed(db);
    await measure(db);
  } finally {
    await db?.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
    say(`\ndropped ${databaseName}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`admin scale bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
