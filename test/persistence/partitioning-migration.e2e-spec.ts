import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, createDataSource, ensureDatabase, MIGRATIONS, runMigrations, utcDayStart } from '@app/persistence/testing';
import { loadEnvironment } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { RetentionService } from '../../apps/delivery-worker/src/retention/retention.service';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { expectBooksToMatchRows } from '../support/books';
import { ADMIN_HEADERS, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';

/**
 * An installation from before partitioning: the migrations up to the previous one, data written into
 * the plain tables, then `runMigrations` (what `npm run migrate` does, through every later migration:
 * the one delivery model moves each event's delivery state into its primary delivery). The data must
 * come through unchanged (same seq, so queued jobs and cursors stay valid), every index must be carried
 * over, and ingest, the worker, the admin API and retention must work on it.
 */
const PARTITIONING = 'TimePartitionedEvents1764200000000';
const base = new URL(process.env.DATABASE_URL ?? '');
const databaseName = `${base.pathname.slice(1)}_partition_upgrade`;
const databaseUrl = Object.assign(new URL(base.toString()), { pathname: `/${databaseName}` }).toString();
const overrides = { DATABASE_URL: databaseUrl, REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'cbtest'}:partition-upgrade` };

async function maintenance(sql: string): Promise<void> {
  const client = new Client({ connectionString: Object.assign(new URL(base.toString()), { pathname: '/postgres' }).toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function migrateToPrevious(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const previous = new DataSource({
    ...buildDataSourceOptions(databaseUrl, { queryTimeoutMs: 0 }),
    // Everything before the partitioning migration: the later ones build on its layout.
    migrations: MIGRATIONS.slice(0, MIGRATIONS.findIndex((migration) => migration.name === PARTITIONING)),
  });
  await previous.initialize();
  try {
    await previous.runMigrations({ transaction: 'each' });
  } finally {
    await previous.destroy();
  }
}

/** The event columns that held the primary's delivery state until migration 1765500000000 moved it into `deliveries`. */
const DELIVERY_STATE = ['status', 'attempts', 'series', 'series_attempts', 'next_attempt_at', 'updated_at', 'delivered_at', 'last_error'];

interface IndexRow {
  table: string;
  name: string;
}

let db: Client;
let receiver: TestReceiver;
const apps: RunningApp[] = [];

beforeAll(async () => {
  await maintenance(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  await migrateToPrevious();
  db = new Client({ connectionString: databaseUrl });
  await db.connect();
  receiver = await new TestReceiver().start();
});

afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
  await receiver?.stop();
  await db?.end();
  await maintenance(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
});

// One installation through the upgrade, then each part of the service on it, in this order.
const today = new Date(utcDayStart(Date.now())).toISOString().slice(0, 10).replaceAll('-', '');
let owner = 0;
let other = 0;
let events: { seq: string; event_id: string }[] = [];

it('brings an existing installation into the partitioned layout: same rows and seq, ids, tallies, every index', async () => {
  // An installation with history: two accounts, old and recent events with attempts, bot calls.
  const { rows: accounts } = await db.query<{ id: number }>(
    `INSERT INTO accounts (email, open_api_token, signing_secret)
     VALUES ('a@example.com', 'token-a', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), ('b@example.com', 'token-b', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
     RETURNING id`,
  );
  [owner, other] = accounts.map((account) => account.id);
  await db.query(`INSERT INTO callback_settings (account_id) VALUES ($1), ($2)`, [owner, other]);
  ({ rows: events } = await db.query<{ seq: string; event_id: string }>(
    `INSERT INTO events (event_id, account_id, action, message, status, attempts, created_at, next_attempt_at, delivered_at)
     VALUES ('old-delivered', $1, 'Customer_create', '{"id":1}', 'delivered', 2, now() - interval '40 days', NULL, now() - interval '40 days'),
            ('old-pending', $1, 'Customer_create', '{"id":2}', 'queued', 0, now() - interval '40 days', now() - interval '1 hour', NULL),
            ('recent-failed', $1, 'Customer_update', '{"id":3}', 'failed', 1, now() - interval '1 day', NULL, NULL)
     RETURNING seq::text AS seq, event_id`,
    [owner],
  ));
  await db.query(
    `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status)
     SELECT e.seq, 0, n, e.created_at, 5, 'https://receiver.example.com/hook', '{}', '{}', 500
       FROM events e CROSS JOIN LATERAL generate_series(1, e.attempts) AS n`,
  );
  await db.query(
    `INSERT INTO bot_calls (account_id, type, integration_name, outcome, duration_ms, created_at)
     VALUES ($1, 'message_trigger', 'faq', 'ok', 10, now() - interval '40 days'), ($1, 'message_trigger', 'faq', 'ok', 10, now())`,
    [owner],
  );
  const indexesBefore = await indexes();
  const snapshot = await db.query(`SELECT * FROM events ORDER BY seq`);

  const report = await runMigrations(databaseUrl);

  expect(report.applied).toEqual(MIGRATIONS.slice(MIGRATIONS.findIndex((migration) => migration.name === PARTITIONING)).map((migration) => migration.name));
  // The existing rows were counted into the stats tallies once (by their primary delivery's status now).
  await expectBooksToMatchRows(db);
  expect((await db.query(`SELECT count(*)::int AS count FROM event_tallies`)).rows[0].count).toBeGreaterThan(0);
  // Today's bot calls stay in their legacy partition until midnight, so bot_calls starts tomorrow;
  // deliveries (later migrations) are partitioned like delivery_attempts from today on.
  expect(report.partitionsCreated).toHaveLength(4 * 8 - 1);
  expect(report.partitionsCreated).toEqual(expect.arrayContaining([`events_p${today}`, `delivery_attempts_p${today}`, `deliveries_p${today}`]));
  expect(report.partitionsCreated).not.toContain(`bot_calls_p${today}`);
  // Same rows, same seq, now inside the legacy partitions, each event's delivery state in its primary
  // delivery; columns added by later migrations (the pull feed's txid and test flag) take their defaults for old rows.
  const snapshotColumns = snapshot.fields.map((field) => (DELIVERY_STATE.includes(field.name) ? `d.${field.name}` : `e.${field.name}`));
  const migrated = await db.query(
    `SELECT ${snapshotColumns.join(', ')}, e.txid, e.test FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' ORDER BY e.seq`,
  );
  expect(migrated.rows.map(({ txid: _txid, test: _test, ...row }) => row)).toEqual(snapshot.rows);
  expect(migrated.rows.map(({ txid, test }) => ({ txid, test }))).toEqual(snapshot.rows.map(() => ({ txid: null, test: false })));
  const { rows: placement } = await db.query<{ partition: string; count: number }>(
    `SELECT tableoid::regclass::text AS partition, count(*)::int AS count FROM events GROUP BY 1
     UNION ALL SELECT tableoid::regclass::text, count(*)::int FROM delivery_attempts GROUP BY 1
     UNION ALL SELECT tableoid::regclass::text, count(*)::int FROM bot_calls GROUP BY 1
     UNION ALL SELECT tableoid::regclass::text, count(*)::int FROM deliveries GROUP BY 1 ORDER BY 1`,
  );
  // The primary deliveries of legacy events have no legacy partition: they live in the default one.
  expect(placement).toEqual([
    { partition: 'bot_calls_legacy', count: 2 },
    { partition: 'deliveries_default', count: 3 },
    { partition: 'delivery_attempts_legacy', count: 3 },
    { partition: 'events_legacy', count: 3 },
  ]);
  const { rows: attemptDestinations } = await db.query(`SELECT DISTINCT destination_id FROM delivery_attempts`);
  expect(attemptDestinations).toEqual([{ destination_id: 'primary' }]);
  expect((await db.query(`SELECT event_id FROM event_keys ORDER BY event_seq`)).rows.map((row) => row.event_id)).toEqual(
    events.map((event) => event.event_id),
  );
  // Every index that was on the three tables is on the partitioned ones (the unique event_id
  // constraint became event_keys plus a plain index), and each partition has them all.
  const after = await indexes();
  // 1765000000000 later dropped the event_id index and two attempts indexes no query used; 1765500000000
  // the indexes over the delivery state that left the events; 1766000000000 replaced the message search's;
  // 1766200000000 took created_at's off the daily partitions (the default and legacy ones keep their own).
  const droppedSince = [
    'events_event_id_key',
    'delivery_attempts_event_idx',
    'delivery_attempts_started_at_idx',
    'events_account_status_seq_idx',
    'events_status_seq_idx',
    'events_pending_due_idx',
    'events_message_search_idx',
    'events_created_at_idx',
  ];
  const expected = indexesBefore.filter((index) => !droppedSince.includes(index.name));
  expect(after.filter((index) => ['events', 'delivery_attempts', 'bot_calls'].includes(index.table))).toEqual(expect.arrayContaining(expected));
  const { rows: missing } = await db.query(
    `SELECT p.relname AS partition, pi.relname AS index
       FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
       JOIN pg_index x ON x.indrelid = i.inhparent JOIN pg_class pi ON pi.oid = x.indexrelid
      WHERE i.inhparent IN ('events'::regclass, 'delivery_attempts'::regclass, 'bot_calls'::regclass, 'deliveries'::regclass)
        AND NOT EXISTS (SELECT 1 FROM pg_inherits ii JOIN pg_index px ON px.indexrelid = ii.inhrelid
                         WHERE ii.inhparent = x.indexrelid AND px.indrelid = p.oid)`,
  );
  expect(missing).toEqual([]);
});

it('ingest: the old ids are still taken, new events land in today\'s partition', async () => {
  const ingest = await startApp(IngestModule, overrides);
  apps.push(ingest);
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  expect((await post({ event_id: 'old-delivered', account_id: owner, action: 'Customer_create', message: { id: 1 } })).body.status).toBe('duplicate');
  expect((await post({ event_id: 'old-delivered', account_id: other, action: 'Customer_create', message: { id: 1 } })).status).toBe(409);
  expect((await post({ event_id: 'after-upgrade', account_id: owner, action: 'Customer_create', message: { id: 4 } })).status).toBe(202);
  const { rows: fresh } = await db.query(`SELECT tableoid::regclass::text AS partition FROM events WHERE event_id = 'after-upgrade'`);
  expect(fresh).toEqual([{ partition: `events_p${today}` }]);
});

/** The config-api of the admin test, kept running: the worker test sets the push URL through it. */
let configApi: RunningApp;

it('admin API: the list spans both layouts newest first; the detail of an old event has its attempts', async () => {
  configApi = await startApp(ConfigApiModule, overrides);
  apps.push(configApi);
  const listed = await fetch(`${configApi.url}/admin/v1/events?account_id=${owner}`, { headers: ADMIN_HEADERS });
  expect(listed.status).toBe(200);
  const list = (await listed.json()) as { items: { event_id: string }[] };
  expect(list.items.map((item) => item.event_id)).toEqual(['after-upgrade', 'recent-failed', 'old-pending', 'old-delivered']);
  const viewed = await fetch(`${configApi.url}/admin/v1/events/old-delivered`, { headers: ADMIN_HEADERS });
  expect(viewed.status).toBe(200);
  const detail = (await viewed.json()) as { attempts: unknown[] };
  expect(detail.attempts).toHaveLength(2);
});

it('worker: the old pending event (overdue, its job long gone) is delivered under its old seq', async () => {
  // Before the worker starts: its first sweep runs at once and could take the event's job while the account
  // has no push URL yet, which ends the delivery no_endpoint.
  await setCallbackSettings(configApi.app, owner, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  const worker = await startApp(DeliveryWorkerModule, { ...overrides, RECONCILE_INTERVAL: '500ms' });
  apps.push(worker);
  await waitFor('the old pending event delivered', async () => {
    const { rows } = await db.query(
      `SELECT d.status FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.event_id = 'old-pending'`,
    );
    return rows[0]?.status === 'delivered';
  });
  expect(receiver.requests.some((request) => request.headers['webhook-id'] === 'old-pending')).toBe(true);
});

it('retention: expired final rows of the legacy partition go one by one; once it is empty it is dropped', async () => {
  const dataSource = createDataSource(databaseUrl, { poolSize: 2 });
  await dataSource.initialize();
  try {
    const retention = new RetentionService(dataSource, loadEnvironment({ ...process.env, ...overrides, RETENTION_DAYS: '30' }));
    const first = await retention.runOnce();
    // Both old events are final by now (the pending one was just delivered); the old bot call goes too.
    expect(first).toMatchObject({ events: 2, botCalls: 1 });
    expect((await db.query(`SELECT event_id FROM events ORDER BY seq`)).rows.map((row) => row.event_id)).toEqual(['recent-failed', 'after-upgrade']);
    // Aged by hand, its book entries written as every statement that changes an event writes them (no trigger does).
    await db.query(
      `WITH aged AS (
         SELECT e.seq, e.account_id, e.created_at AS was, d.status, d.delivered_at
           FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.seq = ANY($1::bigint[])
       ),
       moved AS (UPDATE events SET created_at = now() - interval '40 days' WHERE seq IN (SELECT seq FROM aged))
       INSERT INTO book_entries (account_id, created_at, from_status, to_status, delivered_at)
       SELECT account_id, was, status, NULL, delivered_at FROM aged
       UNION ALL
       SELECT account_id, now() - interval '40 days', NULL, status, delivered_at FROM aged`,
      [events.map((event) => event.seq)],
    );
    await retention.runOnce();
    const { rows: legacy } = await db.query(`SELECT relname FROM pg_class WHERE relname IN ('events_legacy', 'delivery_attempts_legacy')`);
    expect(legacy).toEqual([]);
    expect((await db.query(`SELECT event_id FROM events`)).rows).toEqual([{ event_id: 'after-upgrade' }]);
    expect((await db.query(`SELECT count(*)::int AS count FROM event_keys`)).rows).toEqual([{ count: 1 }]);
    // Their deliveries went with them; legacy rows trimmed one by one were taken out of the tallies too.
    const { rows: deliveries } = await db.query(`SELECT e.event_id FROM deliveries d LEFT JOIN events e ON e.seq = d.event_seq`);
    expect(deliveries).toEqual([{ event_id: 'after-upgrade' }]);
    await expectBooksToMatchRows(db);
  } finally {
    await dataSource.destroy();
  }
});

async function indexes(): Promise<IndexRow[]> {
  const { rows } = await db.query<IndexRow>(
    `SELECT tablename AS table, indexname AS name FROM pg_indexes
      WHERE tablename IN ('events', 'delivery_attempts', 'bot_calls') ORDER BY 1, 2`,
  );
  return rows;
}
