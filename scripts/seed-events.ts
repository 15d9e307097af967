import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { books, createDataSource, partitions, runMigrations } from '@app/persistence';
import { EVENT_ACTIONS } from '@app/payloads';

/**
 * `npm run seed -- --events 10000000 [--days 10] [--accounts 1000] [--database URL]`: fills a database
 * with events spread evenly over the last `days` UTC days (today excluded), with their attempts, for
 * measurements. Straight SQL, never the API: each day is generated with generate_series into bare
 * tables (events, their primary deliveries, attempts), its ids registered in event_keys in one
 * statement, then the tables are attached as that day's partitions (indexes are built once, sorted,
 * instead of row by row). Statuses are 85 % delivered,
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
if (BigInt(perDay) > 1n << partitions.SEQ_COUNTER_BITS) {
  process.stderr.write(`seed: at most ${1n << partitions.SEQ_COUNTER_BITS} events per day; use more --days\n`);
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
      `INSERT INTO accounts (email, name, open_api_token)
       SELECT 'seed-' || n || '-' || md5(random()::text) || '@example.com', 'Seed ' || n, md5(random()::text)
         FROM generate_series(1, $1) AS n`,
      [accountCount - existing.length],
    );
    await dataSource.query(`INSERT INTO callback_settings (account_id) SELECT id FROM accounts ON CONFLICT DO NOTHING`);
    await dataSource.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, signing_secret)
       SELECT 'primary', id, 'webhook', 'https://receiver.example.com/hooks', 'https://receiver.example.com/hooks', 'JSON',
              'whsec_' || encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64')
         FROM accounts ON CONFLICT DO NOTHING`,
    );
  }
  return (await dataSource.query<{ id: number }[]>(`SELECT id FROM accounts ORDER BY id LIMIT $1`, [accountCount])).map((row) => row.id);
}

/** One day: bare tables filled by generate_series, keys registered, then attached as the day's partitions. */
async function seedDay(dataSource: DataSource, dayStart: number, count: number, accounts: number[], pending: boolean): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const tables = ['events', 'deliveries', 'delivery_attempts'] as partitions.PartitionedTable[];
    for (const table of tables) {
      const existing = await partitions.listPartitions(runner, table);
      const { from, to } = { from: partitions.seqAt(dayStart), to: partitions.seqAt(dayStart + partitions.DAY_MS) };
      if (existing.some((partition) => partitions.overlaps(partition, from, to))) throw new Error(`${table} already has a partition for ${new Date(dayStart).toISOString()}`);
    }
    const [events, deliveries, attempts] = tables.map((table) => partitions.dailyPartitionName(table, dayStart));
    const stepMs = partitions.DAY_MS / count;
    await runner.query(`SET maintenance_work_mem = '512MB'`);
    await runner.query(`SET synchronous_commit = off`);
    await runner.query(`CREATE TABLE ${events} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await runner.query(`CREATE TABLE ${deliveries} (LIKE deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS) WITH (fillfactor = 80)`);
    await runner.query(`CREATE TABLE ${attempts} (LIKE delivery_attempts INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    // seq = (epoch ms << 20) | i, i < 2^20: unique and in time order within the day.
    await runner.query(
      `WITH generated AS (
         SELECT s.seq, i, s.created_at, s.status, s.attempts
           FROM generate_series(0::bigint, $3 - 1) AS i,
                LATERAL (SELECT (((${dayStart}::bigint + floor(i * ${stepMs})::bigint) << ${partitions.SEQ_COUNTER_BITS}) | i) AS seq,
                                to_timestamp((${dayStart} + floor(i * ${stepMs})) / 1000.0) AS created_at,
                                ${statusSql(pending)} AS status,
                                CASE WHEN h < 85 THEN 1 WHEN h < 90 THEN 3 WHEN h < 97 THEN 0 WHEN h < 99 THEN ${pending ? 2 : 3} ELSE ${pending ? 0 : 3} END AS attempts
                           FROM (SELECT ((i / 1000) * 37 + i % 7) % 100 AS h) AS hashed) AS s
       ),
       stored AS (
         INSERT INTO ${events} (seq, event_id, account_id, action, message, created_at)
         SELECT seq, 'seed-' || seq, ($1::int[])[1 + (i * 7919) % $2], (${ACTIONS})[1 + i % ${EVENT_ACTIONS.length}],
                json_build_object('id', i, 'customer_id', 100000 + i % 50000, 'name', 'Customer ' || i), created_at
           FROM generated
         RETURNING seq, account_id
       )
       INSERT INTO ${deliveries} (event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at,
                                  delivered_at, last_error, updated_at)
       SELECT g.seq, 'primary', st.account_id, g.status, g.attempts, 0, g.attempts,
              CASE WHEN g.status IN ('queued', 'retrying') THEN g.created_at + interval '1 minute' END,
              CASE WHEN g.status = 'delivered' THEN g.created_at + (20 + g.i % 400) * interval '1 millisecond' END,
              CASE WHEN g.status IN ('failed', 'retrying') THEN 'HTTP 503' END, g.created_at + interval '2 seconds'
         FROM generated g JOIN stored st USING (seq)`,
      [accounts, accounts.length, count],
    );
    await runner.query(
      `INSERT INTO ${attempts} (id, event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding,
                                response_status, response_headers, response_body, error)
       SELECT nextval(pg_get_serial_sequence('delivery_attempts', 'id')), d.event_seq, 'primary', 0, n,
              e.created_at + (n - 1) * interval '10 seconds', (20 + d.event_seq % 400)::int, 'https://receiver.example.com/hooks',
              ('{"content-type":"application/json","webhook-id":"' || e.event_id || '"}')::json, 'json',
              CASE WHEN d.status = 'delivered' THEN 200 ELSE 503 END, '{"content-type":"text/plain"}'::json,
              CASE WHEN d.status = 'delivered' THEN 'ok' ELSE 'busy' END, NULL
         FROM ${deliveries} d JOIN ${events} e ON e.seq = d.event_seq CROSS JOIN LATERAL generate_series(1, d.attempts) AS n`,
    );
    // Pending deliveries are found again by their open rows (docs/delivery-model.md).
    await runner.query(
      `INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at)
       SELECT event_seq, destination_id, account_id, next_attempt_at FROM ${deliveries} WHERE status IN ('queued', 'retrying')`,
    );
    await runner.query(`INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM ${events} ORDER BY event_id`);
    // ATTACH builds every index of the parent on the filled table, sorted, once.
    for (const [table, name] of tables.map((table, index) => [table, [events, deliveries, attempts][index]] as const)) {
      const { from, to } = partitions.dayBounds(table, dayStart);
      await runner.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
    }
    // The day is counted into the stats tallies from its rows (no statement of the apps stored them).
    await runner.query(books.RETALLY_SPAN.text, books.RETALLY_SPAN.values({ since: new Date(dayStart), until: new Date(dayStart + partitions.DAY_MS) }));
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
    const today = partitions.utcDayStart(Date.now());
    let seeded = 0;
    for (let day = days; day >= 1; day -= 1) {
      const count = Math.min(perDay, total - seeded);
      if (count <= 0) break;
      const started = Date.now();
      await seedDay(dataSource, today - day * partitions.DAY_MS, count, accounts, day === 1);
      seeded += count;
      log(`${new Date(today - day * partitions.DAY_MS).toISOString().slice(0, 10)}: ${count} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    await dataSource.query(`ANALYZE events`);
    await dataSource.query(`ANALYZE deliveries`);
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
