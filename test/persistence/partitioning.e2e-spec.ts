import { DataSource } from 'typeorm';
import { COUNTED_SPAN, createDataSource, DAY_MS, MIGRATION_LOCK_KEY, seqAt, Sql, STORE_EVENTS, storeEventsParams, utcDayStart } from '@app/persistence/testing';
import { loadEnvironment } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { PartitionJob } from '../../apps/delivery-worker/src/retention/partition-job.service';
import { RETENTION_BATCH_SIZE, RetentionService } from '../../apps/delivery-worker/src/retention/retention.service';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { expectBooksToMatchRows } from '../support/books';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';

/**
 * Daily partitions: created ahead, dropped whole by retention (events still owed a delivery kept), and
 * event_id unique across them. The suite has a database of its own: it creates and drops partitions of days
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

const PENDING = ['queued', 'retrying'];

/**
 * Events written straight into the day that `seqTimeMs` falls on, as ingest's statement stores them
 * (the event, its key, its primary delivery, its book entry), each with one attempt already made: a
 * `queued` one is a redelivery (second series), the others are at their first series. Pending ones wait
 * for a retry a day away, so they have their open row (docs/delivery-model.md).
 */
async function seedEventsAt(seqTimeMs: number, accountId: number, statuses: string[]): Promise<Seeded[]> {
  const base = seqAt(seqTimeMs);
  const rows = statuses.map((status, index) => ({ seq: (base + BigInt(index)).toString(), eventId: uniqueId('part'), status }));
  await dataSource.query(
    `WITH input AS (
       SELECT t.seq, t.event_id, t.status, to_timestamp($5 / 1000.0) AS created_at,
              CASE WHEN t.status = 'delivered' THEN to_timestamp($5 / 1000.0) + interval '1 second' END AS delivered_at
         FROM unnest($2::bigint[], $3::varchar[], $4::varchar[]) AS t(seq, event_id, status)
     ),
     keys AS (INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, $1, seq FROM input),
     stored AS (
       INSERT INTO events (seq, event_id, account_id, action, message, created_at)
       SELECT seq, event_id, $1, 'Customer_create', '{"id":1}', created_at FROM input
     ),
     delivering AS (
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at, delivered_at)
       SELECT seq, 'primary', $1, status, 1, (status = 'queued')::int, (status <> 'queued')::int,
              CASE WHEN status IN ('queued', 'retrying') THEN now() + interval '1 day' END, delivered_at
         FROM input
     ),
     opened AS (
       INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at)
       SELECT seq, 'primary', $1, now() + interval '1 day' FROM input WHERE status IN ('queued', 'retrying')
     )
     INSERT INTO book_entries (account_id, created_at, to_status, delivered_at) SELECT $1, created_at, status, delivered_at FROM input`,
    [accountId, rows.map((row) => row.seq), rows.map((row) => row.eventId), rows.map((row) => row.status), seqTimeMs],
  );
  await dataSource.query(
    `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status)
     SELECT seq, 'primary', 0, 1, to_timestamp($2 / 1000.0), 12, 'https://receiver.example.com/hook', '{}', '{}', 500 FROM unnest($1::bigint[]) AS seq`,
    [rows.map((row) => row.seq), seqTimeMs],
  );
  return rows;
}

/** One more delivery of a seeded event, to an extra destination; a pending one waits for its retry with its open row. */
async function seedDelivery(seq: string, destinationId: string, accountId: number, status: string): Promise<void> {
  await dataSource.query(
    `WITH delivering AS (
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, next_attempt_at)
       VALUES ($1, $2, $3, $4::varchar, CASE WHEN $4::varchar IN ('queued', 'retrying') THEN now() + interval '1 day' END)
     )
     INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at)
     SELECT $1::bigint, $2::varchar, $3::int, now() + interval '1 day' WHERE $4::varchar IN ('queued', 'retrying')`,
    [seq, destinationId, accountId, status],
  );
}

/** A pending delivery held by its destination's pause, as the worker holds it: no due time, its open row held. */
async function holdByPause(seq: string, destinationId: string): Promise<void> {
  await dataSource.query(
    `WITH held AS (UPDATE deliveries SET next_attempt_at = NULL WHERE event_seq = $1 AND destination_id = $2)
     UPDATE open_deliveries SET held = 'paused', due_at = NULL WHERE event_seq = $1 AND destination_id = $2`,
    [seq, destinationId],
  );
}

/** A delivery ending `failed` as the recorder ends it: its row, its open row closed, and the primary's book entry. */
async function endDelivery(seq: string, destinationId: string): Promise<void> {
  await dataSource.query(
    `WITH before AS (
       SELECT d.account_id, d.status, e.created_at FROM deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE d.event_seq = $1 AND d.destination_id = $2
     ),
     ended AS (UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = now() WHERE event_seq = $1 AND destination_id = $2),
     closed AS (DELETE FROM open_deliveries WHERE event_seq = $1 AND destination_id = $2)
     INSERT INTO book_entries (account_id, created_at, from_status, to_status)
     SELECT account_id, created_at, status, 'failed' FROM before WHERE $2 = 'primary'`,
    [seq, destinationId],
  );
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

async function deliveryRows(seqs: string[]): Promise<{ seq: string; destination: string; status: string; partition: string }[]> {
  return dataSource.query(
    `SELECT event_seq::text AS seq, destination_id AS destination, status, tableoid::regclass::text AS partition
       FROM deliveries WHERE event_seq = ANY($1::bigint[]) ORDER BY event_seq, destination_id COLLATE "C"`,
    [seqs],
  );
}

async function openRows(seqs: string[]): Promise<{ seq: string; destination: string; held: string | null }[]> {
  return dataSource.query(
    `SELECT event_seq::text AS seq, destination_id AS destination, held FROM open_deliveries
      WHERE event_seq = ANY($1::bigint[]) ORDER BY event_seq, destination_id COLLATE "C"`,
    [seqs],
  );
}

/** The tallies of one UTC day equal the counts of its events' primary deliveries, and are these. */
async function expectDayTallies(dayStartMs: number, expected: Record<string, number>): Promise<void> {
  const tallied = await expectBooksToMatchRows(dataSource, { since: new Date(dayStartMs), until: new Date(dayStartMs + DAY_MS) });
  const byStatus: Record<string, number> = {};
  for (const tally of tallied.filter((row) => row.granularity === 'hour')) byStatus[tally.status] = (byStatus[tally.status] ?? 0) + tally.events;
  expect(byStatus).toEqual(expected);
}

async function postEvent(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const message = { id: 7, name: 'Ada' };

/** Events through ingest's own statement (STORE_EVENTS), as its store runs it; no extra destination takes them. */
async function storeEvents(events: { eventId: string; accountId: number; messageText?: string }[]) {
  return ingest.app.get(Sql).rows(
    STORE_EVENTS,
    storeEventsParams(
      events.map((event) => ({
        eventId: event.eventId,
        accountId: event.accountId,
        action: 'Customer_create',
        messageText: event.messageText ?? JSON.stringify(message),
        permissionKey: 'customer_create',
        test: false,
        takers: [],
      })),
    ),
  );
}

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
    for (const table of ['events', 'delivery_attempts', 'bot_calls', 'deliveries']) {
      expect(await partitionsOf(table)).toEqual([...days.map((name) => `${table}_p${name}`), `${table}_default`].sort());
    }
    // Deliveries change with every outcome: their partitions keep room on each page for HOT updates.
    const options = await dataSource.query<{ name: string; options: string[] | null }[]>(
      `SELECT c.relname AS name, c.reloptions AS options FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent IN ('deliveries'::regclass, 'events'::regclass) ORDER BY 1`,
    );
    expect(options).toEqual([
      ...[...days.map((name) => `deliveries_p${name}`), 'deliveries_default'].sort().map((name) => ({ name, options: ['fillfactor=80'] })),
      ...[...days.map((name) => `events_p${name}`), 'events_default'].sort().map((name) => ({ name, options: null })),
    ]);
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
      ['events', 'delivery_attempts', 'bot_calls', 'deliveries'].flatMap((table) => [`${table}_p${ymd(day(8))}`, `${table}_p${ymd(day(9))}`]),
    );
    expect(await whereIs([early.seq])).toEqual([{ seq: early.seq, partition: `events_p${ymd(day(9))}` }]);
    expect(await attemptPartitions([early.seq])).toEqual([`delivery_attempts_p${ymd(day(9))}`]);
    expect(await deliveryRows([early.seq])).toEqual([{ seq: early.seq, destination: 'primary', status: 'queued', partition: `deliveries_p${ymd(day(9))}` }]);
    const [{ options }] = await dataSource.query<{ options: string[] | null }[]>(`SELECT reloptions AS options FROM pg_class WHERE relname = $1`, [
      `deliveries_p${ymd(day(9))}`,
    ]);
    expect(options).toEqual(['fillfactor=80']);
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

  it("refuses a taken id to ingest's statement on another day, and a new id lands in today with a time-ordered seq", async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    const [old] = await seedEventsAt(day(-1) + 60_000, account.id, ['failed']);
    // The statement that stores events claims their ids in event_keys: a taken id is answered as
    // existing (with its owner) and nothing is stored today, whichever account asks.
    for (const accountId of [account.id, other.id]) {
      const stored = await storeEvents([{ eventId: old.eventId, accountId }]);
      expect(stored.filter((row) => row.kind !== 'account')).toEqual([{ kind: 'existing', seq: null, event_id: old.eventId, account_id: account.id, destination_id: null }]);
    }
    expect(await whereIs([old.seq])).toEqual([{ seq: old.seq, partition: `events_p${ymd(day(-1))}` }]);
    const [{ count: copies }] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM events WHERE event_id = $1`, [old.eventId]);
    expect(copies).toBe(1);

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

  it('claims the ids of a multi-row store once per statement, and stores one event for two rows sharing an id', async () => {
    const account = await createAccount(configApi);
    const [first, second, shared] = [uniqueId('direct'), uniqueId('direct'), uniqueId('direct')];
    await storeEvents([first, second].map((eventId) => ({ eventId, accountId: account.id })));
    const keys = await dataSource.query<{ event_id: string; matches: boolean }[]>(
      `SELECT k.event_id, k.event_seq = e.seq AS matches FROM event_keys k JOIN events e USING (event_id) WHERE k.event_id = ANY($1::varchar[]) ORDER BY 1`,
      [[first, second]],
    );
    expect(keys).toEqual([first, second].sort().map((eventId) => ({ event_id: eventId, matches: true })));
    expect((await postEvent({ event_id: first, account_id: account.id, action: 'Customer_create', message })).body.status).toBe('duplicate');

    // Two rows of one statement sharing an id: the first claims it, the second stores nothing.
    const stored = await storeEvents([
      { eventId: shared, accountId: account.id, messageText: '{"id":1}' },
      { eventId: shared, accountId: account.id, messageText: '{"id":2}' },
    ]);
    expect(stored.filter((row) => row.kind === 'inserted')).toHaveLength(1);
    const rows = await dataSource.query<{ message: unknown; keyed: boolean }[]>(
      `SELECT e.message, k.event_seq = e.seq AS keyed FROM events e JOIN event_keys k USING (event_id) WHERE e.event_id = $1`,
      [shared],
    );
    expect(rows).toEqual([{ message: { id: 1 }, keyed: true }]);
    const [{ count }] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM event_keys WHERE event_id = $1`, [shared]);
    expect(count).toBe(1);
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
        const response = await fetch(`${configApi.url}/admin/v1/events?${query}`, { headers: ADMIN_HEADERS });
        expect(response.status).toBe(200);
        const page = (await response.json()) as { items: { event_id: string }[]; next_cursor: string | null };
        seen.push(...page.items.map((item) => item.event_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(expected.map((row) => row.event_id));
      expect(seen.length).toBeGreaterThan(0);
    }
  });
});

describe('counts by acceptance time over partitions', () => {
  it("counts a span's events (the tallies' COUNTED_SPAN) by seq where in line and through the partial index where not, like a plain created_at filter", async () => {
    const span = day(-20) + 600_000;
    await partitions.runOnce(0, day(-20));
    const account = await createAccount(configApi);
    await seedEventsAt(span, account.id, ['delivered', 'failed']);
    // Out of line: stored today with created_at inside the span, and stored in the span's minute with created_at a day later.
    const [moved] = await seedEventsAt(Date.now() - 1000, account.id, ['filtered']);
    await dataSource.query(`UPDATE events SET created_at = to_timestamp($2 / 1000.0) WHERE seq = $1`, [moved.seq, span + 5_000]);
    const [ahead] = await seedEventsAt(span + 1_000, account.id, ['queued']);
    await dataSource.query(`UPDATE events SET created_at = to_timestamp($2 / 1000.0) WHERE seq = $1`, [ahead.seq, span + DAY_MS]);

    const [since, until] = [new Date(span), new Date(span + 60_000)];
    const counted = await ingest.app.get(Sql).rows(COUNTED_SPAN, { since, until });
    const plain = await dataSource.query<{ status: string; events: number }[]>(
      `SELECT d.status::text AS status, count(*)::float8 AS events FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
        WHERE e.created_at >= $1 AND e.created_at < $2 GROUP BY 1`,
      [since, until],
    );
    const byStatus = (rows: { status: string; events: number }[]) => Object.fromEntries(rows.map((row) => [row.status, Number(row.events)]));
    expect(byStatus(counted)).toEqual({ delivered: 1, failed: 1, filtered: 1 });
    expect(byStatus(counted)).toEqual(byStatus(plain));
  });
});

describe('retention by partition', () => {
  it('drops an expired day whole (events, deliveries, attempts, bot calls, ids) and keeps its pending events with their seq, deliveries and attempts', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 5));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    const seeded = await seedEventsAt(expiredDay + 3_600_000, account.id, ['delivered', 'failed', 'queued', 'filtered', 'retrying', 'no_endpoint']);
    const pending = seeded.filter((event) => PENDING.includes(event.status));
    const final = seeded.filter((event) => !pending.includes(event));
    await dataSource.query(
      `INSERT INTO bot_calls (account_id, type, integration_name, outcome, duration_ms, created_at)
       VALUES ($1, 'message_trigger', 'faq', 'ok', 20, to_timestamp($2 / 1000.0)), ($1, 'message_trigger', 'faq', 'ok', 20, now())`,
      [account.id, expiredDay + 3_600_000],
    );
    const [recent] = await seedEventsAt(Date.now() - 60_000, account.id, ['delivered']);
    const suffix = ymd(expiredDay);
    expect(await partitionsOf('events')).toContain(`events_p${suffix}`);
    await expectDayTallies(expiredDay, { delivered: 1, failed: 1, queued: 1, filtered: 1, retrying: 1, no_endpoint: 1 });

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toEqual([`events_p${suffix}`, `bot_calls_p${suffix}`]);
    expect(result.keptPending).toBe(2);
    for (const table of ['events', 'delivery_attempts', 'bot_calls', 'deliveries']) expect(await partitionsOf(table)).not.toContain(`${table}_p${suffix}`);
    // Pending events live on in the default partition under the same seq (queued jobs still find them), with their deliveries, open rows and attempts.
    expect(await whereIs(seeded.map((event) => event.seq))).toEqual(pending.map((event) => ({ seq: event.seq, partition: 'events_default' })));
    expect(await deliveryRows(seeded.map((event) => event.seq))).toEqual(
      pending.map((event) => ({ seq: event.seq, destination: 'primary', status: event.status, partition: 'deliveries_default' })),
    );
    expect(await openRows(seeded.map((event) => event.seq))).toEqual(pending.map((event) => ({ seq: event.seq, destination: 'primary', held: null })));
    expect(await attemptPartitions(pending.map((event) => event.seq))).toEqual(['delivery_attempts_default', 'delivery_attempts_default']);
    expect(await attemptPartitions(final.map((event) => event.seq))).toEqual([]);
    expect(await whereIs([recent.seq])).toHaveLength(1);
    const calls = await dataSource.query<{ created_at: Date }[]>(`SELECT created_at FROM bot_calls WHERE account_id = $1`, [account.id]);
    expect(calls).toHaveLength(1);
    // The day's tallies were counted again from what remains of it.
    await expectDayTallies(expiredDay, { queued: 1, retrying: 1 });

    // The ids of dropped events are forgotten; those of kept ones stay taken.
    const keys = await dataSource.query<{ event_id: string }[]>(`SELECT event_id FROM event_keys WHERE event_id = ANY($1::varchar[]) ORDER BY event_seq`, [
      seeded.map((event) => event.eventId),
    ]);
    expect(keys.map((key) => key.event_id)).toEqual(pending.map((event) => event.eventId));
    expect((await postEvent({ event_id: pending[0].eventId, account_id: account.id, action: 'Customer_create', message })).body.status).toBe('duplicate');
    expect((await postEvent({ event_id: final[0].eventId, account_id: account.id, action: 'Customer_create', message })).status).toBe(202);

    // Once a kept event's delivery reaches a final status it goes too, row by row, with its delivery, attempts and id.
    await endDelivery(pending[0].seq, 'primary');
    const second = await retention.runOnce();
    expect(second).toMatchObject({ droppedPartitions: [], events: 1, eventKeys: 1 });
    expect(await whereIs(pending.map((event) => event.seq))).toEqual([{ seq: pending[1].seq, partition: 'events_default' }]);
    expect(await deliveryRows(pending.map((event) => event.seq))).toEqual([
      { seq: pending[1].seq, destination: 'primary', status: 'retrying', partition: 'deliveries_default' },
    ]);
    expect(await attemptPartitions(pending.map((event) => event.seq))).toEqual(['delivery_attempts_default']);
    await expectDayTallies(expiredDay, { retrying: 1 });
  });

  it("forgets a day's ids in batches before dropping it, and a kept event whose id was forgotten meanwhile takes it back", async () => {
    const expiredDay = day(-(RETENTION_DAYS + 9));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    const statuses = [...Array.from({ length: RETENTION_BATCH_SIZE + 2 }, () => 'delivered'), 'retrying'];
    const seeded = await seedEventsAt(expiredDay + 3_600_000, account.id, statuses);
    const redelivered = seeded[seeded.length - 1];
    // As if the ids were forgotten while its delivery was final, and a redelivery made it pending before the drop.
    await dataSource.query(`DELETE FROM event_keys WHERE event_id = $1`, [redelivered.eventId]);

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toContain(`events_p${ymd(expiredDay)}`);
    expect(result.keptPending).toBe(1);
    expect(result.eventKeys).toBeGreaterThanOrEqual(RETENTION_BATCH_SIZE + 2);
    const keys = await dataSource.query<{ event_id: string; seq: string }[]>(`SELECT event_id, event_seq::text AS seq FROM event_keys WHERE event_id = ANY($1::varchar[])`, [
      seeded.map((event) => event.eventId),
    ]);
    expect(keys).toEqual([{ event_id: redelivered.eventId, seq: redelivered.seq }]);
    expect((await postEvent({ event_id: redelivered.eventId, account_id: account.id, action: 'Customer_create', message })).body.status).toBe('duplicate');
  });

  it('keeps an ended event still owed to a destination, with its deliveries, until that delivery ends too', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 6));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    const [owed, done] = await seedEventsAt(expiredDay + 3_600_000, account.id, ['delivered', 'delivered']);
    await seedDelivery(owed.seq, 'dst_pending', account.id, 'retrying');
    await seedDelivery(owed.seq, 'dst_done', account.id, 'delivered');
    await seedDelivery(done.seq, 'dst_done', account.id, 'delivered');

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toContain(`events_p${ymd(expiredDay)}`);
    expect(result.keptPending).toBe(1);
    expect(await partitionsOf('deliveries')).not.toContain(`deliveries_p${ymd(expiredDay)}`);
    expect(await whereIs([owed.seq, done.seq])).toEqual([{ seq: owed.seq, partition: 'events_default' }]);
    expect(await deliveryRows([owed.seq, done.seq])).toEqual([
      { seq: owed.seq, destination: 'dst_done', status: 'delivered', partition: 'deliveries_default' },
      { seq: owed.seq, destination: 'dst_pending', status: 'retrying', partition: 'deliveries_default' },
      { seq: owed.seq, destination: 'primary', status: 'delivered', partition: 'deliveries_default' },
    ]);
    expect(await openRows([owed.seq, done.seq])).toEqual([{ seq: owed.seq, destination: 'dst_pending', held: null }]);
    await expectDayTallies(expiredDay, { delivered: 1 });

    // Still owed: the row-by-row trim leaves it; once its last delivery ends, the event goes with its deliveries.
    expect((await retention.runOnce()).events).toBe(0);
    await endDelivery(owed.seq, 'dst_pending');
    expect((await retention.runOnce()).events).toBe(1);
    expect(await whereIs([owed.seq])).toEqual([]);
    expect(await deliveryRows([owed.seq])).toEqual([]);
    await expectDayTallies(expiredDay, {});
  });

  it('takes the pending deliveries only held by a pause with their day (and their open rows), and keeps a retrying one', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 7));
    await partitions.runOnce(0, expiredDay);
    const account = await createAccount(configApi);
    // The primary paused with a delivery held; a delivered event whose extra destination is paused; a retry due.
    const [pausedPrimary, pausedExtra, retrying] = await seedEventsAt(expiredDay + 3_600_000, account.id, ['queued', 'delivered', 'retrying']);
    await holdByPause(pausedPrimary.seq, 'primary');
    await seedDelivery(pausedExtra.seq, 'dst_paused', account.id, 'queued');
    await holdByPause(pausedExtra.seq, 'dst_paused');
    const seqs = [pausedPrimary.seq, pausedExtra.seq, retrying.seq];
    expect(await openRows(seqs)).toEqual([
      { seq: pausedPrimary.seq, destination: 'primary', held: 'paused' },
      { seq: pausedExtra.seq, destination: 'dst_paused', held: 'paused' },
      { seq: retrying.seq, destination: 'primary', held: null },
    ]);

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toContain(`events_p${ymd(expiredDay)}`);
    expect(result.keptPending).toBe(1);
    expect(await whereIs(seqs)).toEqual([{ seq: retrying.seq, partition: 'events_default' }]);
    expect(await deliveryRows(seqs)).toEqual([{ seq: retrying.seq, destination: 'primary', status: 'retrying', partition: 'deliveries_default' }]);
    expect(await openRows(seqs)).toEqual([{ seq: retrying.seq, destination: 'primary', held: null }]);
    expect(await attemptPartitions(seqs)).toEqual(['delivery_attempts_default']);
    const keys = await dataSource.query<{ event_id: string }[]>(`SELECT event_id FROM event_keys WHERE event_seq = ANY($1::bigint[])`, [seqs]);
    expect(keys).toEqual([{ event_id: retrying.eventId }]);
    await expectDayTallies(expiredDay, { retrying: 1 });
  });

  it('drops a day from before destinations (no deliveries partition of its own) with the deliveries it kept in the default partition, pending ones kept', async () => {
    const expiredDay = day(-(RETENTION_DAYS + 8));
    await partitions.runOnce(0, expiredDay);
    // Days made before migration 1765100000000 had events and attempts partitions only; their deliveries
    // (the primary's, moved out of the events by 1765500000000) live in the default partition.
    await dataSource.query(`DROP TABLE deliveries_p${ymd(expiredDay)}`);
    const account = await createAccount(configApi);
    const seeded = await seedEventsAt(expiredDay + 3_600_000, account.id, ['delivered', 'retrying', 'failed', 'queued']);
    const [paused] = await seedEventsAt(expiredDay + 7_200_000, account.id, ['queued']);
    await holdByPause(paused.seq, 'primary');
    const pending = seeded.filter((event) => PENDING.includes(event.status));
    const all = [...seeded, paused].map((event) => event.seq);
    expect((await deliveryRows(all)).map((row) => row.partition)).toEqual(all.map(() => 'deliveries_default'));

    const result = await retention.runOnce();

    expect(result.droppedPartitions).toContain(`events_p${ymd(expiredDay)}`);
    expect(result.keptPending).toBe(2);
    expect(await whereIs(all)).toEqual(pending.map((event) => ({ seq: event.seq, partition: 'events_default' })));
    expect(await deliveryRows(all)).toEqual(
      pending.map((event) => ({ seq: event.seq, destination: 'primary', status: event.status, partition: 'deliveries_default' })),
    );
    expect(await openRows(all)).toEqual(pending.map((event) => ({ seq: event.seq, destination: 'primary', held: null })));
    expect(await attemptPartitions(all)).toEqual(['delivery_attempts_default', 'delivery_attempts_default']);
    await expectDayTallies(expiredDay, { retrying: 1, queued: 1 });
  });
});
