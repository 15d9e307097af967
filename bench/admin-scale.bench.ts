import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, GenericPlanPool, runMigrations, Sql } from '@app/persistence/testing';
import { type Environment, loadDatabaseSettings } from '@app/runtime';
import { pageAccountIds } from '../apps/config-api/src/admin/accounts/account-list';
import { AdminEventsService } from '../apps/config-api/src/admin/events/admin-events.service';
import { EventStatsService } from '../apps/config-api/src/admin/stats/event-stats.service';
import { StatsSeriesService } from '../apps/config-api/src/admin/stats/stats-series.service';
import { CREATE_MESSAGE_INDEX, ingestBatches, MESSAGE_INDEX, seedAdminScale } from './support/admin-scale-seed';

/**
 * `npm run bench:admin`: the operators' calls on a log of millions of events, each against the scan it
 * replaces, in a database of its own (created, seeded with generate_series, dropped; the rows are those
 * of today's delivery model: bench/support/admin-scale-seed.ts). Sizes:
 * ADMIN_SCALE_EVENTS (default 2,000,000 events over 7 days, each with its primary delivery: 85 % delivered
 * at the first attempt, 10 % failed after 3, 5 % filtered) and
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

function compare(name: string, fast: number, slow: number, slowName: string, note = ''): void {
  say(`  ${name.padEnd(46)} ${fast.toFixed(1).padStart(8)} ms   ${slowName}: ${slow.toFixed(1).padStart(8)} ms   ratio ${(slow / fast).toFixed(0)}x${note}`);
}

/** The series as a live query would compute it: attempts from the attempt log, outcomes and latency from the primary deliveries. */
async function scanSeries(db: DataSource, unit: string, since: Date, accountId: number | null): Promise<void> {
  await Promise.all([
    db.query(
      `SELECT date_trunc($1, a.started_at, 'UTC') AS t, count(*), count(*) FILTER (WHERE a.response_status IS NULL OR a.response_status >= 300)
         FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq
        WHERE a.started_at >= $2 AND ($3::int IS NULL OR e.account_id = $3) GROUP BY 1`,
      [unit, since, accountId],
    ),
    db.query(
      `SELECT date_trunc($1, d.updated_at, 'UTC') AS t, count(*) FILTER (WHERE d.status = 'delivered'), count(*) FILTER (WHERE d.status <> 'delivered'),
              percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY d.delivered_at - e.created_at)
         FROM deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE d.destination_id = 'primary' AND d.updated_at >= $2 AND d.status IN ('delivered', 'failed', 'expired')
          AND ($3::int IS NULL OR d.account_id = $3) GROUP BY 1`,
      [unit, since, accountId],
    ),
  ]);
}

/** GET /admin/v1/stats for every account as rows would answer it: events by their primary delivery's status, latency percentiles. */
async function scanEventStats(db: DataSource, since: Date): Promise<void> {
  await db.query(
    `SELECT d.status, count(*), percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY d.delivered_at - e.created_at)
       FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
      WHERE e.created_at >= $1 GROUP BY 1`,
    [since],
  );
}

/** A DataSource whose query() keeps the last statement it ran: the event list's own SQL, to run again as a scan and to EXPLAIN. */
function capturing(db: DataSource): { db: DataSource; last: () => [string, unknown[]] } {
  let last: [string, unknown[]] = ['', []];
  const wrapped = Object.create(db) as DataSource;
  wrapped.query = ((query: string, parameters?: unknown[]) => {
    last = [query, parameters ?? []];
    return db.query(query, parameters);
  }) as DataSource['query'];
  return { db: wrapped, last: () => last };
}

async function measure(db: DataSource): Promise<void> {
  const sql = new Sql(db, new GenericPlanPool(db));
  const series = new StatsSeriesService(sql);
  const eventStats = new EventStatsService(sql);
  const now = Date.now();
  say('\nstats series (delivery rollups vs the same numbers computed from deliveries and attempts)');
  for (const [bucket, unit, spanMs] of [['1m', 'minute', 3_600_000], ['1h', 'hour', 86_400_000], ['1d', 'day', DAYS * 86_400_000]] as const) {
    for (const accountId of [null, 42]) {
      const since = new Date(now - spanMs);
      const fast = await median(5, () => series.series({ bucket, since: since.toISOString(), ...(accountId ? { account_id: accountId } : {}) }));
      const slow = await median(1, () => scanSeries(db, unit, since, accountId));
      compare(`${bucket} over ${spanMs / 3_600_000} h, ${accountId ? 'one account' : 'all accounts'}`, fast, slow, 'scan');
    }
  }

  say('\nevent stats, all accounts (event tallies vs counting events with their primary deliveries)');
  for (const spanMs of [3_600_000, 86_400_000, DAYS * 86_400_000]) {
    const since = new Date(now - spanMs - 12_345);
    const fast = await median(5, () => eventStats.stats({ since: since.toISOString() }));
    const slow = await median(1, () => scanEventStats(db, since));
    compare(`since ${spanMs / 3_600_000} h ago`, fast, slow, 'scan');
  }

  say(`\nq: search inside messages (the event list, ${MESSAGE_INDEX}, vs its own statement with bitmap scans off: a scan)`);
  const listed = capturing(db);
  // The event view reads PUBLIC_URL only to rebuild request bodies, which the list never does.
  const listing = new AdminEventsService(listed.db, sql, { publicUrl: '' } as Environment);
  for (const [label, q, days] of [['customer_id 123457', '123457', DAYS], ['sub_session_id', 'ss_fe7ecc4de28b2c83c016b5c6c2acd826', DAYS], ['"web" (every event), 1 day', 'web', 1]] as const) {
    const since = new Date(now - days * 86_400_000).toISOString();
    let found = 0;
    const fast = await median(5, async () => (found = (await listing.list({ q, since })).items.length));
    const [statement, parameters] = listed.last();
    let scanned = 0;
    const slow = await median(1, () =>
      db.transaction(async (manager) => {
        // GIN is read through bitmap scans only: without them the same condition is checked row by row.
        await manager.query('SET LOCAL enable_bitmapscan = off');
        scanned = (await manager.query<unknown[]>(statement, parameters)).length;
      }),
    );
    // The indexes the list's plan reads, each partition's prefix dropped (events_p20261130_message_scalars_idx: events_message_scalars_idx).
    const plan = JSON.stringify(await db.query(`EXPLAIN (FORMAT JSON) ${statement}`, parameters));
    const indexes = new Set([...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((match) => match[1].replace(/^events_p\d+_/, 'events_')));
    // The list answers a page of 50 (it reads 51 to know whether another follows).
    const agree = found === Math.min(scanned, 50) ? '' : `, scan found ${scanned}`;
    compare(label, fast, slow, 'scan', `   (${found} found${agree}; the list's plan reads ${[...indexes].join(', ') || 'no index'})`);
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

  say('\ningest insert cost with and without the message search index (ingest\'s statement, 200 batches of 500 events, with / without / with)');
  const withIndex = await ingestBatches(sql, 1, 200, 500);
  await db.query(`DROP INDEX ${MESSAGE_INDEX}`);
  const withoutIndex = await ingestBatches(sql, 201, 200, 500);
  await timed('re-created the index', () => db.query(CREATE_MESSAGE_INDEX));
  const withAgain = await ingestBatches(sql, 401, 200, 500);
  const withMean = (withIndex + withAgain) / 2;
  say(`  with the index ${withIndex.toFixed(0)} / ${withAgain.toFixed(0)} ms, without ${withoutIndex.toFixed(0)} ms: ${(withMean / withoutIndex).toFixed(2)}x (${((withMean - withoutIndex) / 100_000).toFixed(3)} ms more per event)`);
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
    say(`seeding ${ACCOUNTS.toLocaleString('en-US')} accounts and ${EVENTS.toLocaleString('en-US')} events over ${DAYS} days`);
    await seedAdminScale(db, { events: EVENTS, accounts: ACCOUNTS, activeAccounts: ACTIVE_ACCOUNTS, days: DAYS }, timed);
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
