import { DataSource } from 'typeorm';
import { createDataSource, DAY_MS, MIGRATION_LOCK_KEY, seqAt, utcDayStart } from '@app/persistence';
import { loadEnvironment } from '@app/runtime';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { PartitionJob } from '../apps/delivery-worker/src/retention/partition-job.service';
import { RetentionService } from '../apps/delivery-worker/src/retention/retention.service';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS } from './support/fixtures';
import { IsolatedNamespace } from './support/isolated-namespace';

/**
 * Daily partitions: created ahead, dropped whole by retention (pending events kept), and event_id
 * unique across them. The suite has a database of its own: it creates and drops partitions of days
 * long gone, which other suites' data must not share.
 */
const namespace = new IsolatedNamespace('partitioning');
const RETENTION_DAYS = 30;

let configApi: RunningApp;
let ingest: RunningApp;
let dataSource: DataSource;
let partitions: PartitionJob;
let retention: RetentionService;
let counter = 0;

function day(offsetDays: number): number {
  return utcDayStart(Date.now()) + offsetDays * DAY_MS;
}

function ymd(dayStartMs: number): string {
  return new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '');
}

function uniqueId(label: string): string {
  counter += 1;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

async function partitionsOf(table: string): Promise<string[]> {
  const rows = await dataSource.query<{ name: string }[]>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [table],
  );
  return rows.map((row) => row.name);
}

interface Seeded {
  seq: string;
  eventId: string;
  status: string;
}

/** Events written straight into the day that `seqTimeMs` falls on, with an attempt each. */
async function seedEventsAt(seqTimeMs: number, accountId: number, statuses: string[]): Promise<Seeded[]> {
  const base = seqAt(seqTimeMs);
  const rows = statuses.map((status, index) => ({ seq: (base + BigInt(index)).toString(), eventId: uniqueId('part'), status }));
  await dataSource.query(
    `INSERT INTO events (seq, event_id, account_id, action, message, status, attempts, created_at, next_attempt_at)
     SELECT t.seq, t.event_id, $1, 'Customer_create', '{"id":1}', t.status, 1, to_timestamp($5 / 1000.0),
            CASE WHEN t.status IN ('queued', 'retrying') THEN now() + interval '1 day' END
       FROM unnest($2::bigint[], $3::varchar[], $4::varchar[]) AS t(seq, event_id, status)`,
    [accountId, rows.map((row) => row.seq), rows.map((row) => row.eventId), rows.map((row) => row.status), seqTimeMs],
  );
  await dataSource.query(
    `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status)
     SELECT seq, 0, 1, to_timestamp($2 / 1000.0), 12, 'https://receiver.example.com/hook', '{}', '{}', 500 FROM unnest($1::bigint[]) AS seq`,
    [rows.map((row) => row.seq), seqTimeMs],
  );
  return rows;
}

async function whereIs(seqs: string[]): Promise<{ seq: string; partition: string }[]> {
  return dataSource.query(`SELECT seq::text AS seq, tableoid::regclass::text AS partition FROM events WHERE seq = ANY($1::bigint[]) ORDER BY events.seq`, [seqs]);
}

async function attemptPartitions(seqs: string[]): Promise<string[]> {
  const rows = await dataSource.query<{ partition: string }[]>(
    `SELECT tableoid::regclass::text AS partition FROM delivery_attempts WHERE event_seq = ANY($1::bigint[]) ORDER BY event_seq`,
    [seqs],
  );
  return rows.map((row) => row.partition);
}

async function postEvent(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const message = { id: 7, name: 'Ada' };

beforeAll(async () => {
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  ingest = await startApp(IngestModule, namespace.overrides);
  dataSource = createDataSource(namespace.databaseUrl, { poolSize: 3 });
  await dataSource.initialize();
  partitions = new PartitionJob(dataSource);
  retention = new RetentionService(dataSource, loadEnvironment({ ...process.env, RETENTION_DAYS: String(RETENTION_DAYS) }));
});

afterAll(async () => {
  await retention?.beforeApplicationShutdown();
  await partitions?.beforeApplicationShutdown();
  await dataSource?.destroy();
  await ingest?.close();
  await configApi?.close();
  await namespace.tearDown();
});

describe('daily partitions', () => {
  it('exist for today and the days ahead right after migrate, each table with a default partition', async () => {
    const days = Array.from({ length: 8 }, (_, index) => ymd(day(index)));
    for (const table of ['events', 'delivery_attempts', 'bot_calls', 'destination_deliveries']) {
      expect(await partitionsOf(table)).toEqual([...days.map((name) => `${table}_p${name}`), `${table}_default`].sort());
    }
  });

  it('are created ahead by the lock-guarded job, which moves rows that landed in the default partition', async () => {
    const account = await createAccount(configApi);
    // A row for a day no partition covers yet waits in the default partition...
    const [early] = await seedEventsAt(day(9) + 3_600_000, account.id, ['queued']);
    expect(await whereIs([early.seq])).toEqual([{ seq: early.seq, partition: 'events_default' }]);

    // ...while another process holds the lock, the job does nothing.
    const holder = dataSource.createQueryRunner();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      expect(await partitions.runOnce(9)).toBeNull();
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      await holder.release();
    }

    const created = await partitions.runOnce(9);
    expect(created).toEqual(
      ['events', 'delivery_attempts', 'bot_calls', 'destination_deliveries'].flatMap((table) => [`${table}_p${ymd(day(8))}`, `${table}_p${ymd(day(9))}`]),
    );
    expect(await whereIs([early.seq])).toEqual([{ seq: early.seq, partition: `events_p${ymd(day(9))}` }]);
    expect(await attemptPartitions([early.seq])).toEqual([`delivery_attempts_p${ymd(day(9))}`]);
    // The new partition carries every index of the table.
    const [{ count }] = await dataSource.query<{ count: number }[]>(
      `SELECT (SELECT count(*) FROM pg_indexes WHERE tablename = $1) - (SELECT count(*) FROM pg_indexes WHERE tablename = 'events') AS count`,
      [`events_p${ymd(day(9))}`],
    );
    expect(Number(count)).toBe(0);
    expect(await partitions.runOnce(9)).toEqual([]);
  });
});

describe('event_id across partitions', () => {
  it('answers duplicate to the same account and 409 to another for an id stored on an earlier day', async () => {
    await partitions.runOnce(0, day(-1));
    const owner = await createAccount(configApi);
    const other = await createAccount(configApi);
    const [yesterday] = await seedEventsAt(day(-1) + 7_200_000, owner.id, ['delivered']);
    expect(await whereIs([yesterday.seq])).toEqual([{ seq: yesterday.seq, partition: `events_p${ymd(day(-1))}` }]);

    const same = await postEvent({ event_id: yesterday.eventId, account_id: owner.id, action: 'Customer_create', message });
    expect(same).toEqual({ status: 200, body: expect.objectContaining({ event_id: yesterday.eventId, status: 'duplicate' }) });
    const taken = await postEvent({ event_id: yesterday.eventId, account_id: other.id, action: 'Customer_create', message });
    expect(taken.status).toBe(409);
    const batch = await fetch(`${ingest.url}/v1/events/batch`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({
        events: [
          { event_id: yesterday.eventId, account_id: other.id, action: 'Customer_create', message },
          { event_id: yesterday.eventId, account_id: owner.id, action: 'Customer_create', message },
        ],
      }),
    });
    const results = ((await batch.json()) as { results: { status: string }[] }).results.map((result) => result.status);
    expect(results).toEqual(['rejected', 'duplicate']);
    const [{ count }] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM events WHERE event_id = $1`, [
      yesterday.eventId,
    ]);
    expect(count).toBe(1);
  });

  it('refuses a direct insert of a taken id into another day, and a new id lands in today with a time-ordered seq', async () => {
    const account = await createAccount(configApi);
    const [old] = await seedEventsAt(day(-1) + 60_000, account.id, ['failed']);
    await expect(
      dataSource.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}')`, [old.eventId, account.id]),
    ).rejects.toMatchObject({ code: '23505' });

    const before = seqAt(Date.now());
    const fresh = await postEvent({ event_id: uniqueId('fresh'), account_id: account.id, action: 'Customer_create', message });
    expect(fresh.status).toBe(202);
    const [row] = await dataSource.query<{ seq: string; partition: string }[]>(
      `SELECT seq::text AS seq, tableoid::regclass::text AS partition FROM events WHERE event_id = $1`,
      [fresh.body.event_id],
    );
    expect(row.partition).toBe(`events_p${ymd(day(0))}`);
    expect(BigInt(row.seq) >= before && BigInt(row.seq) < seqAt(Date.now() + 1)).toBe(true);
    const detail = await fetch(`${configApi.url}/admin/v1/events/${String(fresh.body.event_id)}`, { headers: ADMIN_HEADERS });
    expect(detail.status).toBe(200);
  });

  it('claims the ids of a direct multi-row insert once per statement, and refuses two rows sharing an id', async () => {
    const account = await createAccount(configApi);
    const [first, second, shared] = [uniqueId('direct'), uniqueId('direct'), uniqueId('direct')];
    await dataSource.query(
      `INSERT INTO events (event_id, account_id, action, message) SELECT id, $2, 'Customer_create', '{}' FROM unnest($1::varchar[]) AS id`,
      [[first, second], account.id],
    );
    const keys = await dataSource.query<{ event_id: string; matches: boolean }[]>(
      `SELECT k.event_id, k.event_seq = e.seq AS matches FROM event_keys k JOIN events e USING (event_id) WHERE k.event_id = ANY($1::varchar[]) ORDER BY 1`,
      [[first, second]],
    );
    expect(keys).toEqual([first, second].sort().map((eventId) => ({ event_id: eventId, matches: true })));
    expect((await postEvent({ event_id: first, account_id: account.id, action: 'Customer_create', message })).body.status).toBe('duplicate');

    await expect(
      dataSource.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}'), ($1, $2, 'Customer_create', '{}')`, [
        shared,
        account.id,
      ]),
    ).rejects.toMatchObject({ code: '23505', constraint: 'event_keys_pkey', message: `event_id ${shared} is already taken` });
    const [{ count }] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM event_keys WHERE event_id = $1`, [shared]);
    expect(count).toBe(0);
  });
});

describe('the event list over partitions', () => {
  it('answers since/until exactly like a plain created_at filter, for rows in line with their seq and rows that are not', async () => {
    await partitions.runOnce(2, day(-3));
    const account = await createAccount(configApi);
    // In line: seq and created_at agree, every six hours over four days.
    for (let hour = 0; hour < 96; hour += 6) await seedEventsAt(day(-3) + hour * 3_600_000, account.id, ['delivered']);
    // Out of line: written today with created_at days earlier, and with created_at ahead of their seq.
    const [today] = await seedEventsAt(Date.now() - 1000, account.id, ['failed']);
    await dataSource.query(`UPDATE events SET created_at = to_timestamp($2 / 1000.0) WHERE seq = $1`, [today.seq, day(-2) + 1000]);
    const [ahead] = await seedEventsAt(day(-3) + 600_000, account.id, ['filtered']);
    await dataSource.query(`UPDATE events SET created_at = to_timestamp($2 / 1000.0) WHERE seq = $1`, [ahead.seq, day(-1) + 1000]);

    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    for (const [since, until] of [
      [day(-2), null],
      [null, day(-1)],
      [day(-2) - 30_000, day(-1) + 3 * 3_600_000],
      [day(-3) + 5 * 3_600_000, day(-2) + 13 * 3_600_000],
    ] as const) {
      const expected = await dataSource.query<{ event_id: string }[]>(
        `SELECT event_id FROM events WHERE account_id = $1 AND ($2::float8 IS NULL OR created_at >= to_timestamp($2 / 1000.0))
            AND ($3::float8 IS NULL OR created_at < to_timestamp($3 / 1000.0)) ORDER BY seq DESC`,
        [account.id, since, until],
      );
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query = `account_id=${account.id}&limit=3${since ? `&since=${iso(since)}` : ''}${until ? `&until=${iso(until)}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await (await fetch(`${configApi.url}/admin/v1/events?${query}`, { headers: ADMIN_HEADERS })).json()) as {
          items: { event_id: string }[];
          next_cursor: string | null;
        };
        seen.push(...page.items.map((item) => item.event_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(expected.map((row) => row.event_id));
      expect(seen.length).toBeGreaterThan(0);
    }
  });
});

describe('retention by partition', () => {
  it('drops an expired day whole (events, attempts, bot calls, ids) and keeps its pending events with their seq and attempts', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 5));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    const seeded = await seedEventsAt(expiredDay + 3_600_000, account.id, ['delivered', 'failed', 'queued', 'filtered', 'retrying', 'no_endpoint']);
    const pending = seeded.filter((event) => event.status === 'queued' || event.status === 'retrying');
    const final = seeded.filter((event) => !pending.includes(event));
    await dataSource.query(
      `INSERT INTO bot_calls (account_id, type, integration_name, outcome, duration_ms, created_at)
       VALUES ($1, 'message_trigger', 'faq', 'ok', 20, to_timestamp($2 / 1000.0)), ($1, 'message_trigger', 'faq', 'ok', 20, now())`,
      [account.id, expiredDay + 3_600_000],
    );
    const [recent] = await seedEventsAt(Date.now() - 60_000, account.id, ['delivered']);
    const suffix = ymd(expiredDay);
    expect(await partitionsOf('events')).toContain(`events_p${suffix}`);

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toEqual([`events_p${suffix}`, `bot_calls_p${suffix}`]);
    expect(result.keptPending).toBe(2);
    for (const table of ['events', 'delivery_attempts', 'bot_calls', 'destination_deliveries']) expect(await partitionsOf(table)).not.toContain(`${table}_p${suffix}`);
    // Pending events live on in the default partition under the same seq (queued jobs still find them), with their attempts.
    expect(await whereIs(seeded.map((event) => event.seq))).toEqual(pending.map((event) => ({ seq: event.seq, partition: 'events_default' })));
    expect(await attemptPartitions(pending.map((event) => event.seq))).toEqual(['delivery_attempts_default', 'delivery_attempts_default']);
    expect(await attemptPartitions(final.map((event) => event.seq))).toEqual([]);
    expect(await whereIs([recent.seq])).toHaveLength(1);
    const calls = await dataSource.query<{ created_at: Date }[]>(`SELECT created_at FROM bot_calls WHERE account_id = $1`, [account.id]);
    expect(calls).toHaveLength(1);

    // The ids of dropped events are forgotten; those of kept ones stay taken.
    const keys = await dataSource.query<{ event_id: string }[]>(`SELECT event_id FROM event_keys WHERE event_id = ANY($1::varchar[]) ORDER BY event_seq`, [
      seeded.map((event) => event.eventId),
    ]);
    expect(keys.map((key) => key.event_id)).toEqual(pending.map((event) => event.eventId));
    expect((await postEvent({ event_id: pending[0].eventId, account_id: account.id, action: 'Customer_create', message })).body.status).toBe('duplicate');
    expect((await postEvent({ event_id: final[0].eventId, account_id: account.id, action: 'Customer_create', message })).status).toBe(202);

    // Once a kept event reaches a final status it goes too, row by row, with its attempts and id.
    await dataSource.query(`UPDATE events SET status = 'failed', next_attempt_at = NULL WHERE seq = $1`, [pending[0].seq]);
    const second = await retention.runOnce();
    expect(second).toMatchObject({ droppedPartitions: [], events: 1, eventKeys: 1 });
    expect(await whereIs(pending.map((event) => event.seq))).toEqual([{ seq: pending[1].seq, partition: 'events_default' }]);
    expect(await attemptPartitions(pending.map((event) => event.seq))).toEqual(['delivery_attempts_default']);
  });

  it('keeps an ended event still owed to a destination, with its deliveries, until that delivery ends too', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 6));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    const [owed, done] = await seedEventsAt(expiredDay + 3_600_000, account.id, ['delivered', 'delivered']);
    await dataSource.query(
      `INSERT INTO destination_deliveries (event_seq, destination_id, account_id, status, next_attempt_at)
       VALUES ($1, 'dst_pending', $3, 'retrying', now() + interval '1 day'), ($1, 'dst_done', $3, 'delivered', NULL), ($2, 'dst_done', $3, 'delivered', NULL)`,
      [owed.seq, done.seq, account.id],
    );
    const deliveries = async () =>
      dataSource.query<{ seq: string; destination: string; partition: string }[]>(
        `SELECT event_seq::text AS seq, destination_id AS destination, tableoid::regclass::text AS partition
           FROM destination_deliveries WHERE event_seq = ANY($1::bigint[]) ORDER BY event_seq, destination_id`,
        [[owed.seq, done.seq]],
      );

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toContain(`events_p${ymd(expiredDay)}`);
    expect(await partitionsOf('destination_deliveries')).not.toContain(`destination_deliveries_p${ymd(expiredDay)}`);
    expect(await whereIs([owed.seq, done.seq])).toEqual([{ seq: owed.seq, partition: 'events_default' }]);
    expect(await deliveries()).toEqual([
      { seq: owed.seq, destination: 'dst_done', partition: 'destination_deliveries_default' },
      { seq: owed.seq, destination: 'dst_pending', partition: 'destination_deliveries_default' },
    ]);

    // Still owed: the row-by-row trim leaves it; once its last delivery ends, the event goes with its deliveries.
    expect((await retention.runOnce()).events).toBe(0);
    await dataSource.query(`UPDATE destination_deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_seq = $1`, [owed.seq]);
    expect((await retention.runOnce()).events).toBe(1);
    expect(await whereIs([owed.seq])).toEqual([]);
    expect(await deliveries()).toEqual([]);
  });
});
