import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import {
  createDataSource,
  DAY_MS,
  dailyPartitionName,
  dayBounds,
  listPartitions,
  overlaps,
  type PartitionedTable,
  runMigrations,
  seqAt,
  SEQ_COUNTER_BITS,
  tallyRowsSql,
  utcDayStart,
} from '@app/persistence';
import { EVENT_ACTIONS } from '@app/payloads';

/**
 * `npm run seed -- --events 10000000 [--days 10] [--accounts 1000] [--database URL]`: fills a database
 * with events spread evenly over the last `days` UTC days (today excluded), with their attempts, for
 * measurements. Straight SQL, never the API: each day is generated with generate_series into a bare
 * table, its ids registered in event_keys in one statement, then the table is attached as that day's
 * partition (indexes are built once, sorted, instead of row by row). Statuses are 85 % delivered,
 * 5 % failed, 4 % filtered, 3 % no_endpoint, and 3 % still pending (2 % retrying, 1 % queued) on the
 * newest day, failed on older ones; a delivered event has one attempt, a failed one three, a retrying
 * one two. Refuses days that already have a partition.
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '10' },
    accounts: { type: 'string', default: '1000' },
    database: { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/callbacks' },
  },
});

const total = Number(values.events);
const days = Number(values.days);
const accountCount = Number(values.accounts);
if (!Number.isInteger(total) || total < 1 || !Number.isInteger(days) || days < 1 || !Number.isInteger(accountCount) || accountCount < 1) {
  process.stderr.write('seed: --events, --days and --accounts must be positive integers\n');
  process.exit(1);
}
const perDay = Math.ceil(total / days);
if (BigInt(perDay) > 1n << SEQ_COUNTER_BITS) {
  process.stderr.write(`seed: at most ${1n << SEQ_COUNTER_BITS} events per day; use more --days\n`);
  process.exit(1);
}

const ACTIONS = `ARRAY[${EVENT_ACTIONS.map((action) => `'${action}'`).join(',')}]`;
/**
 * i → status by a 100-slot cycle over i / 1000, so that every account (chosen by i mod 1000) gets the
 * whole mix; i % 7 breaks up runs. Only the
 * newest day has pending events: older ones have run through the whole retry schedule (under a day),
 * so their would-be pending slots are failed.
 */
function statusSql(pending: boolean): string {
  return `CASE WHEN h < 85 THEN 'delivered' WHEN h < 90 THEN 'failed' WHEN h < 94 THEN 'filtered'
               WHEN h < 97 THEN 'no_endpoint' WHEN ${pending ? "h < 99 THEN 'retrying' ELSE 'queued'" : "TRUE THEN 'failed'"} END`;
}

function log(text: string): void {
  process.stdout.write(`seed: ${text}\n`);
}

async function ensureAccounts(dataSource: DataSource): Promise<number[]> {
  const existing = await dataSource.query<{ id: number }[]>(`SELECT id FROM accounts ORDER BY id LIMIT $1`, [accountCount]);
  if (existing.length < accountCount) {
    await dataSource.query(
      `INSERT INTO accounts (email, name, open_api_token, signing_secret)
       SELECT 'seed-' || n || '-' || md5(random()::text) || '@example.com', 'Seed ' || n, md5(random()::text), 'whsec_' || encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64')
         FROM generate_series(1, $1) AS n`,
      [accountCount - existing.length],
    );
    await dataSource.query(`INSERT INTO callback_settings (account_id) SELECT id FROM accounts ON CONFLICT DO NOTHING`);
  }
  return (await dataSource.query<{ id: number }[]>(`SELECT id FROM accounts ORDER BY id LIMIT $1`, [accountCount])).map((row) => row.id);
}

/** One day: bare tables filled by generate_series, keys registered, then attached as the day's partitions. */
async function seedDay(dataSource: DataSource, dayStart: number, count: number, accounts: number[], pending: boolean): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    for (const table of ['events', 'delivery_attempts'] as PartitionedTable[]) {
      const existing = await listPartitions(runner, table);
      const { from, to } = { from: seqAt(dayStart), to: seqAt(dayStart + DAY_MS) };
      if (existing.some((partition) => overlaps(partition, from, to))) throw new Error(`${table} already has a partition for ${new Date(dayStart).toISOString()}`);
    }
    const events = dailyPartitionName('events', dayStart);
    const attempts = dailyPartitionName('delivery_attempts', dayStart);
    const stepMs = DAY_MS / count;
    await runner.query(`SET maintenance_work_mem = '512MB'`);
    await runner.query(`SET synchronous_commit = off`);
    await runner.query(`CREATE TABLE ${events} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await runner.query(`CREATE TABLE ${attempts} (LIKE delivery_attempts INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    // seq = (epoch ms << 20) | i, i < 2^20: unique and in time order within the day.
    await runner.query(
      `INSERT INTO ${events} (seq, event_id, account_id, action, message, status, attempts, series, series_attempts,
                              next_attempt_at, created_at, updated_at, delivered_at, last_error)
       SELECT s.seq, 'seed-' || s.seq, ($1::int[])[1 + (i * 7919) % $2], (${ACTIONS})[1 + i % ${EVENT_ACTIONS.length}],
              json_build_object('id', i, 'customer_id', 100000 + i % 50000, 'name', 'Customer ' || i),
              s.status, s.attempts, 0, s.attempts,
              CASE WHEN s.status IN ('queued', 'retrying') THEN s.created_at + interval '1 minute' END,
              s.created_at, s.created_at + interval '2 seconds',
              CASE WHEN s.status = 'delivered' THEN s.created_at + (20 + i % 400) * interval '1 millisecond' END,
              CASE WHEN s.status IN ('failed', 'retrying') THEN 'HTTP 503' END
         FROM generate_series(0::bigint, $3 - 1) AS i,
              LATERAL (SELECT (((${dayStart}::bigint + floor(i * ${stepMs})::bigint) << ${SEQ_COUNTER_BITS}) | i) AS seq,
                              to_timestamp((${dayStart} + floor(i * ${stepMs})) / 1000.0) AS created_at,
                              ${statusSql(pending)} AS status,
                              CASE WHEN h < 85 THEN 1 WHEN h < 90 THEN 3 WHEN h < 97 THEN 0 WHEN h < 99 THEN ${pending ? 2 : 3} ELSE ${pending ? 0 : 3} END AS attempts
                         FROM (SELECT ((i / 1000) * 37 + i % 7) % 100 AS h) AS hashed) AS s`,
      [accounts, accounts.length, count],
    );
    await runner.query(
      `INSERT INTO ${attempts} (id, event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body,
                                response_status, response_headers, response_body, error)
       SELECT nextval(pg_get_serial_sequence('delivery_attempts', 'id')), e.seq, 0, n, e.created_at + (n - 1) * interval '10 seconds', (20 + e.seq % 400)::int, 'https://receiver.example.com/hooks',
              ('{"content-type":"application/json","webhook-id":"' || e.event_id || '"}')::json,
              '{"action":"' || e.action || '","message":' || e.message::text || '}',
              CASE WHEN e.status = 'delivered' THEN 200 ELSE 503 END, '{"content-type":"text/plain"}'::json,
              CASE WHEN e.status = 'delivered' THEN 'ok' ELSE 'busy' END, NULL
         FROM ${events} e CROSS JOIN LATERAL generate_series(1, e.attempts) AS n`,
    );
    await runner.query(`INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM ${events} ORDER BY event_id`);
    // Attaching a filled table fires no trigger on events: the day is added to the stats tallies here.
    await runner.query(tallyRowsSql(events, 1));
    // ATTACH builds every index of the parent on the filled table, sorted, once.
    for (const [table, name] of [
      ['events', events],
      ['delivery_attempts', attempts],
    ] as const) {
      const { from, to } = dayBounds(table, dayStart);
      await runner.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
    }
  } finally {
    await runner.release();
  }
}

async function main(): Promise<void> {
  const report = await runMigrations(values.database);
  log(`database ready (${report.applied.length} migration(s) applied, ${report.partitionsCreated.length} partition(s) created)`);
  const dataSource = createDataSource(values.database, { poolSize: 2, applicationName: 'event-callbacks-seed', queryTimeoutMs: 0 });
  await dataSource.initialize();
  try {
    const accounts = await ensureAccounts(dataSource);
    const today = utcDayStart(Date.now());
    let seeded = 0;
    for (let day = days; day >= 1; day -= 1) {
      const count = Math.min(perDay, total - seeded);
      if (count <= 0) break;
      const started = Date.now();
      await seedDay(dataSource, today - day * DAY_MS, count, accounts, day === 1);
      seeded += count;
      log(`${new Date(today - day * DAY_MS).toISOString().slice(0, 10)}: ${count} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    await dataSource.query(`ANALYZE events`);
    await dataSource.query(`ANALYZE delivery_attempts`);
    await dataSource.query(`ANALYZE event_keys`);
    log(`${seeded} events over ${days} day(s) for ${accounts.length} account(s)`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`seed: failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
