import type { ChildProcess } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { createDataSource, DAY_MS, dropExpiredPartitions, utcDayStart } from '@app/persistence';
import { DELETE_EVENT_KEYS_SQL } from '../apps/delivery-worker/src/retention/residual-trim';
import { STORE_SQL } from '../apps/ingest/src/events/event-store.service';
import { percentiles, startConfigApiProcess, stopProcess, timedGet } from './support/config-api-process';

/**
 * Measures a database filled by `npm run seed` through the real config-api (started from source on
 * loopback): the event list (first page and the 100th page, per filter), the event detail and the stats,
 * timed over HTTP; then the plans of the same requests, captured by auto_explain (EXPLAIN ANALYZE,
 * BUFFERS) from the server log; then dropping the oldest seeded day, without and with pending events.
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/measure-partitions.ts --database URL`
 * Destructive: it drops the two oldest days it finds.
 */
const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    port: { type: 'string', default: '3977' },
    runs: { type: 'string', default: '15' },
    log: { type: 'string', default: '/var/log/postgresql/postgresql-15-main.log' },
    plans: { type: 'string', default: '/tmp/partition-plans.txt' },
  },
});
if (!values.database) throw new Error('--database is required');
const databaseUrl = values.database;
const databaseName = new URL(databaseUrl).pathname.slice(1);
const TOKEN = 'bench-admin-token-0123456789';
const base = `http://127.0.0.1:${values.port}`;
const runs = Number(values.runs);

function startConfigApi(): Promise<ChildProcess> {
  return startConfigApiProcess(
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/config-api/src/main.ts'],
    { DATABASE_URL: databaseUrl, CONFIG_API_PORT: values.port ?? '3977', ADMIN_TOKEN: TOKEN, REDIS_PREFIX: 'bench-partitions', LOG_LEVEL: 'error', TS_NODE_PROJECT: 'tsconfig.json' },
    base,
    resolve(__dirname, '..'),
  );
}

const stop = stopProcess;

function get(path: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  return timedGet(base, path, `Bearer ${TOKEN}`);
}

function summary(samples: number[]): string {
  const { median, p95, max } = percentiles(samples);
  return `${median.toFixed(1)} | ${p95.toFixed(1)} | ${max.toFixed(1)}`;
}

/** The cursor of the 99th page, so the request timed is the 100th page. */
async function cursorAt(query: string, pages: number): Promise<string | null> {
  let cursor: string | null = null;
  for (let page = 1; page < pages; page += 1) {
    const { body } = await get(`/admin/v1/events?${query}&limit=50${cursor ? `&cursor=${cursor}` : ''}`);
    cursor = body.next_cursor as string | null;
    if (cursor === null) return null;
  }
  return cursor;
}

async function main(): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const today = utcDayStart(Date.now());
  const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  const [{ account_id: account }] = (await db.query<{ account_id: number }>(`SELECT account_id FROM events WHERE seq > 0 LIMIT 1`)).rows;
  const filters: [string, string][] = [
    ['no filter', ''],
    ['account_id', `account_id=${account}`],
    ['action', 'action=Customer_create'],
    ['status=failed', 'status=failed'],
    ['since (3 days)', `since=${iso(today - 3 * DAY_MS)}`],
    ['until (6 days ago, mid-day)', `until=${iso(today - 6 * DAY_MS + 13 * 3_600_000)}`],
    ['since+until (1.5 days)', `since=${iso(today - 5 * DAY_MS + 6 * 3_600_000)}&until=${iso(today - 4 * DAY_MS + 18 * 3_600_000)}`],
    ['account_id+status', `account_id=${account}&status=failed`],
  ];
  const sampleIds = (await db.query<{ event_id: string }>(`SELECT event_id FROM event_keys TABLESAMPLE SYSTEM (0.1) LIMIT 20`)).rows.map((row) => row.event_id);

  const lines: string[] = ['| request | median ms | p95 ms | max ms |', '|---|---|---|---|'];
  const deep = new Map<string, string | null>();
  let api = await startConfigApi();
  try {
    // Every pooled connection plans its first query over the partitioned tables from a cold catalog
    // cache (about 25 ms once); warm them all, as a running service has, before timing.
    await Promise.all(Array.from({ length: 40 }, () => get(`/admin/v1/events?limit=50`)));
    for (const [label, query] of filters) {
      const first: number[] = [];
      for (let run = 0; run < runs + 2; run += 1) first.push((await get(`/admin/v1/events?${query}&limit=50`)).ms);
      lines.push(`| list, ${label}, first page | ${summary(first.slice(2))} |`);
      const cursor = await cursorAt(query, 100);
      deep.set(label, cursor);
      if (cursor === null) {
        lines.push(`| list, ${label}, page 100 | fewer than 100 pages | | |`);
        continue;
      }
      const hundredth: number[] = [];
      for (let run = 0; run < runs + 2; run += 1) hundredth.push((await get(`/admin/v1/events?${query}&limit=50&cursor=${cursor}`)).ms);
      lines.push(`| list, ${label}, page 100 | ${summary(hundredth.slice(2))} |`);
    }
    const details: number[] = [];
    for (const id of sampleIds) details.push((await get(`/admin/v1/events/${encodeURIComponent(id)}`)).ms);
    lines.push(`| detail (${sampleIds.length} random events) | ${summary(details)} |`);
    for (const [label, query] of [
      ['stats, all accounts', ''],
      ['stats, account_id', `account_id=${account}`],
      ['stats, since 1 day', `since=${iso(Date.now() - DAY_MS)}`],
      ['stats, account_id + since 1 day', `account_id=${account}&since=${iso(Date.now() - DAY_MS)}`],
    ]) {
      const samples: number[] = [];
      for (let run = 0; run < 5; run += 1) samples.push((await get(`/admin/v1/stats?${query}`)).ms);
      lines.push(`| ${label} | ${summary(samples.slice(1))} |`);
    }
  } finally {
    await stop(api);
  }

  // Plans: auto_explain in every new session of this database, one request per case, read back from the log.
  await db.query(`ALTER DATABASE "${databaseName}" SET session_preload_libraries = 'auto_explain'`);
  for (const [name, value] of [
    ['log_min_duration', '0'],
    ['log_analyze', 'on'],
    ['log_buffers', 'on'],
  ]) {
    await db.query(`ALTER DATABASE "${databaseName}" SET auto_explain.${name} = ${value}`);
  }
  const logStart = statSync(values.log).size;
  api = await startConfigApi();
  try {
    for (const [label, query] of filters) {
      await get(`/admin/v1/events?${query}&limit=50`);
      const cursor = deep.get(label);
      if (cursor) await get(`/admin/v1/events?${query}&limit=50&cursor=${cursor}`);
    }
    await get(`/admin/v1/events/${encodeURIComponent(sampleIds[0])}`);
    await get(`/admin/v1/stats?account_id=${account}`);
    await get(`/admin/v1/stats`);
  } finally {
    await stop(api);
    await db.query(`ALTER DATABASE "${databaseName}" RESET ALL`);
  }
  // The worker's and ingest's statements, by hand (rolled back): each must touch one partition per row.
  const statements: string[] = [];
  const explain = async (label: string, sql: string, parameters: unknown[], tallies = true) => {
    await db.query('BEGIN');
    try {
      // What the event tallies' triggers cost a statement: the same statement with them off (rolled back).
      if (!tallies) for (const trigger of ['events_tally_insert', 'events_tally_update']) await db.query(`ALTER TABLE events DISABLE TRIGGER ${trigger}`);
      const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, parameters);
      statements.push(`-- ${label}\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`);
      const timing = rows.filter((row) => /Planning Time|Execution Time/.test(row['QUERY PLAN'])).map((row) => row['QUERY PLAN'].trim());
      lines.push(`| ${label}: ${timing.join(', ')} | | | |`);
    } finally {
      await db.query('ROLLBACK');
    }
  };
  const recent = (await db.query<{ seq: string }>(`SELECT seq::text AS seq FROM events TABLESAMPLE SYSTEM (0.05) LIMIT 200`)).rows.map((row) => row.seq);
  for (let round = 0; round < 2; round += 1) {
    await explain(`worker load, 200 events (round ${round + 1})`, `SELECT seq, event_id, message::text FROM events WHERE seq = ANY($1::bigint[])`, [recent]);
    await explain(
      `worker outcome write, 200 events (round ${round + 1})`,
      `WITH inserted AS (
         INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body)
         SELECT s, 0, 9, now(), 5, 'https://receiver.example.com/hooks', '{}', '{}' FROM unnest($1::bigint[]) AS s
       )
       UPDATE events e SET attempts = e.attempts + 1, updated_at = now() FROM unnest($1::bigint[]) AS v(seq) WHERE e.seq = v.seq`,
      [recent],
    );
    for (const tallies of [true, false]) {
      const label = tallies ? '' : ', event tallies off';
      await explain(
        `ingest, 100 new events (round ${round + 1}${label})`,
        STORE_SQL,
        [
          Array.from({ length: 100 }, (_, index) => `measure-${Date.now()}-${round}-${index}-${tallies}`),
          Array.from({ length: 100 }, () => account),
          Array.from({ length: 100 }, () => 'Customer_create'),
          Array.from({ length: 100 }, (_, index) => JSON.stringify({ id: index })),
        ],
        tallies,
      );
      await explain(
        `worker outcome write changing status, 200 events (round ${round + 1}${label})`,
        `WITH inserted AS (
           INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body)
           SELECT s, 0, 9, now(), 5, 'https://receiver.example.com/hooks', '{}', '{}' FROM unnest($1::bigint[]) AS s
         )
         UPDATE events e SET status = 'failed', attempts = e.attempts + 1, updated_at = now() FROM unnest($1::bigint[]) AS v(seq) WHERE e.seq = v.seq`,
        [recent],
        tallies,
      );
    }
    await explain(
      `reconciler claim (round ${round + 1})`,
      `SELECT seq FROM events WHERE status IN ('queued', 'retrying') AND next_attempt_at < now() - interval '30 seconds'
        ORDER BY next_attempt_at LIMIT 500 FOR UPDATE SKIP LOCKED`,
      [],
    );
  }

  const log = readFileSync(values.log).subarray(logStart).toString('utf8');
  const blocks = log.split(/\n(?=\d{4}-\d\d-\d\d )/).filter((block) => block.includes(`@${databaseName} LOG:  duration:`) && /FROM events|event_keys/.test(block));
  writeFileSync(values.plans, [...blocks, ...statements].join('\n\n'));
  lines.push('', `plans: ${blocks.length} written to ${values.plans}`);

  // Dropping the oldest day (no pending events), then the next one with 1,000 events made pending.
  const dataSource = createDataSource(databaseUrl, { poolSize: 2, queryTimeoutMs: 0 });
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    const oldest = (await db.query<{ name: string }>(`SELECT min(relname) AS name FROM pg_class WHERE relname ~ '^events_p\\d{8}$'`)).rows[0].name;
    const oldestDay = Date.UTC(Number(oldest.slice(8, 12)), Number(oldest.slice(12, 14)) - 1, Number(oldest.slice(14, 16)));
    const size = async (day: number) =>
      (
        await db.query<{ events: string; attempts: string }>(
          `SELECT (SELECT count(*) FROM events_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}) AS events,
                  (SELECT count(*) FROM delivery_attempts_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}) AS attempts`,
        )
      ).rows[0];
    const first = await size(oldestDay);
    let started = performance.now();
    const dropped = await dropExpiredPartitions(runner, oldestDay + DAY_MS);
    lines.push(`| drop ${JSON.stringify(dropped)} (${first.events} events, ${first.attempts} attempts) | ${(performance.now() - started).toFixed(1)} ms | | |`);

    const second = await size(oldestDay + DAY_MS);
    await db.query(
      `UPDATE events SET status = 'retrying', next_attempt_at = now() + interval '1 hour'
        WHERE seq IN (SELECT seq FROM events_p${new Date(oldestDay + DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')} WHERE status = 'failed' LIMIT 1000)`,
    );
    started = performance.now();
    const droppedPending = await dropExpiredPartitions(runner, oldestDay + 2 * DAY_MS);
    lines.push(
      `| drop ${JSON.stringify(droppedPending)} (${second.events} events, ${second.attempts} attempts, 1000 pending moved) | ${(performance.now() - started).toFixed(1)} ms | | |`,
    );

    // Forgetting the ids of the two dropped days: the one part of retention that is row by row.
    started = performance.now();
    let removed = 0;
    let from = '0';
    for (;;) {
      const [batch] = (await runner.query(DELETE_EVENT_KEYS_SQL, [String(BigInt(oldestDay + 2 * DAY_MS) << 20n), from, 5000])) as {
        picked: number;
        deleted: number;
        last: string | null;
      }[];
      removed += batch.deleted;
      if (batch.picked < 5000 || batch.last === null) break;
      from = batch.last;
    }
    const seconds = (performance.now() - started) / 1000;
    lines.push(`| event_keys trimmed after the drops: ${removed} ids | ${(seconds * 1000).toFixed(0)} ms (${Math.round(removed / seconds)} ids/s) | | |`);
  } finally {
    await runner.release();
    await dataSource.destroy();
    await db.end();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`measure: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
