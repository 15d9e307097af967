import { DataSource } from 'typeorm';
import { DAY_MS, LATENCY_BUCKETS, seqAt, utcDayStart } from '@app/persistence/testing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { OutcomeStore } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { PartitionJob } from '../../apps/delivery-worker/src/retention/partition-job.service';
import { RETENTION_BATCH_SIZE, RETENTION_LOCK_KEY, type RetentionResult, RetentionService } from '../../apps/delivery-worker/src/retention/retention.service';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, useApps } from '../support/apps';
import { expectBooksToMatchRows } from '../support/books';
import { createAccount } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { announceSettingsChange, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('retention');

/**
 * The longest retention allowed: other suites share this database and seed final events dated in 2024,
 * which a shorter retention would delete under them. "Old" rows here are older still: they are written
 * into daily partitions of days RETENTION_DAYS + 5 ago (created here through the partition job), or
 * into the default partition for the rows retention deletes one by one.
 */
const RETENTION_DAYS = 3650;
const FINAL_STATUSES = ['delivered', 'failed', 'filtered', 'no_endpoint'] as const;
type Status = (typeof FINAL_STATUSES)[number] | 'queued' | 'retrying';

interface SeedEvent {
  /** Its primary delivery's status. */
  status: Status;
  attempts?: number;
  /** A pending primary delivery held by its destination's pause (the account's primary must be paused). */
  paused?: boolean;
  /** Its delivery to another destination of the account, pending (held by that destination's pause, or waiting for a retry) or not. */
  other?: { destinationId: string; status: Status; paused?: boolean };
}

interface SeededEvent extends SeedEvent {
  seq: string;
  eventId: string;
}

const WORKER_SETTINGS = {
  RETENTION_DAYS: String(RETENTION_DAYS),
  // These workers are here for retention only: a long reconcile interval keeps them from picking up
  // other suites' pending events from the shared database.
  RECONCILE_INTERVAL: '1h',
  WORKER_CONCURRENCY: '1',
};

const today = utcDayStart(Date.now());
/** Each test gets expired days of its own, so a round of one test cannot take another's rows. */
let nextOldDay = today - (RETENTION_DAYS + 5) * DAY_MS;

describe('retention', () => {
  const { configApi, workerA, workerB } = useApps({
    configApi: ConfigApiModule,
    workerA: [DeliveryWorkerModule, WORKER_SETTINGS],
    workerB: [DeliveryWorkerModule, WORKER_SETTINGS],
  });
  let db: DataSource;
  let seedCounter = 0;

  beforeAll(() => {
    db = workerA.app.get(DataSource);
  });

  const retentionOf = (worker: RunningApp) => worker.app.get(RetentionService, { strict: false });

  async function newAccountId(): Promise<number> {
    return (await createAccount(configApi)).id;
  }

  /**
   * A fresh expired day with its daily partitions, made by the worker's own partition job; it answers
   * null while another process (a worker's start-up run) holds the lock, so it is asked again.
   */
  async function expiredDay(): Promise<number> {
    nextOldDay -= DAY_MS;
    const day = nextOldDay;
    await waitFor('the partition job to take the lock', () => workerA.app.get(PartitionJob, { strict: false }).runOnce(0, day).then((created) => created !== null));
    return day;
  }

  /**
   * Rows are written straight to the tables as ingest's statement and the recorder leave them, their seq
   * (so their partitions) and created_at at `atMs`: the event with its key, its deliveries, the attempts,
   * the open rows of the pending deliveries and the book entry of the primary's status (the books must
   * stay exact through retention). A pending delivery's open row is held by a pause or due only tomorrow,
   * so no worker's feeder or reconciler picks it up and moves it on.
   */
  async function seedEvents(accountId: number, atMs: number, events: SeedEvent[]): Promise<SeededEvent[]> {
    const ids = events.map(() => {
      seedCounter += 1;
      return `retention-${process.pid}-${Date.now().toString(36)}-${seedCounter}`;
    });
    const base = seqAt(atMs) + BigInt(seedCounter);
    const seqs = events.map((_, index) => (base + BigInt(index)).toString());
    const deliveries = events.flatMap((event, index) => [
      { seq: seqs[index], destinationId: 'primary', status: event.status, attempts: event.attempts ?? 0, paused: event.paused === true },
      ...(event.other ? [{ seq: seqs[index], destinationId: event.other.destinationId, status: event.other.status, attempts: 0, paused: event.other.paused === true }] : []),
    ]);
    const column = <K extends keyof (typeof deliveries)[number]>(key: K) => deliveries.map((delivery) => delivery[key]);
    await db.query(
      `WITH keys AS (
         INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, $1, seq FROM unnest($2::bigint[], $3::varchar[]) AS t(seq, event_id)
       ),
       inserted AS (
         INSERT INTO events (seq, event_id, account_id, action, message, created_at)
         SELECT seq, event_id, $1, 'Customer_create', '{"id":1}', to_timestamp($4 / 1000.0) FROM unnest($2::bigint[], $3::varchar[]) AS t(seq, event_id)
       ),
       d AS (
         SELECT * FROM unnest($5::bigint[], $6::varchar[], $7::varchar[], $8::int[], $9::bool[]) AS d(seq, destination_id, status, attempts, paused)
       ),
       delivering AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series_attempts, next_attempt_at, delivered_at, updated_at)
         SELECT seq, destination_id, $1, status, attempts, CASE WHEN status IN ('queued', 'retrying') THEN attempts ELSE 0 END,
                CASE WHEN status IN ('queued', 'retrying') AND NOT paused THEN now() + interval '1 day' END,
                CASE WHEN status = 'delivered' THEN to_timestamp($4 / 1000.0) END, to_timestamp($4 / 1000.0)
           FROM d
       ),
       opened AS (
         INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at, held)
         SELECT seq, destination_id, $1, CASE WHEN NOT paused THEN now() + interval '1 day' END, CASE WHEN paused THEN 'paused' END
           FROM d WHERE status IN ('queued', 'retrying')
       )
       INSERT INTO book_entries (account_id, created_at, to_status, delivered_at)
       SELECT $1, to_timestamp($4 / 1000.0), status, CASE WHEN status = 'delivered' THEN to_timestamp($4 / 1000.0) END
         FROM d WHERE destination_id = 'primary'`,
      [accountId, seqs, ids, atMs, column('seq'), column('destinationId'), column('status'), column('attempts'), column('paused')],
    );
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status)
       SELECT d.event_seq, d.destination_id, 0, n, e.created_at, 12, 'https://receiver.example.com/hook', '{}', 'json', 500
         FROM deliveries d JOIN events e ON e.seq = d.event_seq CROSS JOIN LATERAL generate_series(1, d.attempts) AS n
        WHERE d.event_seq = ANY($1::bigint[])`,
      [seqs],
    );
    seedCounter += events.length;
    return events.map((event, index) => ({ ...event, eventId: ids[index], seq: seqs[index] }));
  }

  /** An account whose primary is paused, with one more destination, paused too when asked: their held deliveries stay held. */
  async function pausedAccount(otherPaused: boolean): Promise<{ accountId: number; destinationId: string }> {
    const accountId = await newAccountId();
    const destinationId = `dst_retention${process.pid.toString(36)}${Date.now().toString(36)}`;
    await db.query(`UPDATE destinations SET paused = true, version = version + 1 WHERE account_id = $1 AND id = 'primary'`, [accountId]);
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, signing_secret, paused)
       VALUES ($1, $2, 'webhook', 'https://receiver.example.com/d', 'https://receiver.example.com/d', 'sealed', $3)`,
      [destinationId, accountId, otherPaused],
    );
    await announceSettingsChange(workerA.app, accountId);
    return { accountId, destinationId };
  }

  /** The books of the days from `fromMs`'s to `toMs`'s (whole days: no other file writes events that old). */
  function days(fromMs: number, toMs = fromMs): { since: Date; until: Date } {
    return { since: new Date(utcDayStart(fromMs)), until: new Date(utcDayStart(toMs) + DAY_MS) };
  }

  async function seedBotCalls(accountId: number, atMs: number[]): Promise<string[]> {
    const rows = await db.query<{ id: string }[]>(
      `INSERT INTO bot_calls (account_id, type, integration_name, outcome, duration_ms, created_at)
       SELECT $1, 'message_trigger', 'faq', 'ok', 20, to_timestamp(at / 1000.0)
         FROM unnest($2::float8[]) WITH ORDINALITY AS t(at, ord)
        ORDER BY ord
       RETURNING id::text AS id`,
      [accountId, atMs],
    );
    return rows.map((row) => row.id);
  }

  async function remainingEventIds(accountId: number): Promise<string[]> {
    const rows = await db.query<{ event_id: string }[]>(`SELECT event_id FROM events WHERE account_id = $1 ORDER BY seq`, [accountId]);
    return rows.map((row) => row.event_id);
  }

  /** Attempts per event, read by seq so that attempts of a deleted event would still be found. */
  async function attemptCounts(events: SeededEvent[]): Promise<number[]> {
    const rows = await db.query<{ seq: string; count: number }[]>(
      `SELECT s.seq::text AS seq, count(a.id)::int AS count
         FROM unnest($1::bigint[]) AS s(seq) LEFT JOIN delivery_attempts a ON a.event_seq = s.seq
        GROUP BY s.seq`,
      [events.map((event) => event.seq)],
    );
    const bySeq = new Map(rows.map((row) => [row.seq, row.count]));
    return events.map((event) => bySeq.get(event.seq) ?? -1);
  }

  async function remainingBotCalls(accountId: number): Promise<string[]> {
    const rows = await db.query<{ id: string }[]>(`SELECT id::text AS id FROM bot_calls WHERE account_id = $1 ORDER BY bot_calls.id`, [accountId]);
    return rows.map((row) => row.id);
  }

  async function partitionExists(name: string): Promise<boolean> {
    return (await db.query<unknown[]>(`SELECT 1 FROM pg_class WHERE relname = $1`, [name])).length > 0;
  }

  const suffix = (dayMs: number) => new Date(dayMs).toISOString().slice(0, 10).replaceAll('-', '');

  /** The deliveries and open rows left of these events, as `seq/destination`. */
  async function remainingDeliveries(events: SeededEvent[]): Promise<{ deliveries: string[]; open: string[] }> {
    const seqs = events.map((event) => event.seq);
    const read = async (table: string) =>
      (
        await db.query<{ key: string }[]>(`SELECT event_seq::text || '/' || destination_id AS key FROM ${table} WHERE event_seq = ANY($1::bigint[]) ORDER BY 1`, [seqs])
      ).map((row) => row.key);
    return { deliveries: await read('deliveries'), open: await read('open_deliveries') };
  }

  it('drops an expired day with its attempts in every final status, and keeps pending and recent events', async () => {
    const accountId = await newAccountId();
    const day = await expiredDay();
    const old = await seedEvents(
      accountId,
      day + 3_600_000,
      FINAL_STATUSES.map((status) => ({ status, attempts: status === 'delivered' || status === 'failed' ? 3 : 0 })),
    );
    const oldPending = await seedEvents(accountId, day + 7_200_000, [{ status: 'queued' }, { status: 'retrying', attempts: 2 }]);
    // Within RETENTION_DAYS: today's partition.
    const recent = await seedEvents(accountId, Date.now() - 60_000, [
      ...FINAL_STATUSES.map((status) => ({ status, attempts: 1 })),
      { status: 'delivered' as const, attempts: 1 },
    ]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.droppedPartitions).toContain(`events_p${suffix(day)}`);
    expect(result.keptPending).toBeGreaterThanOrEqual(2);
    for (const table of ['events', 'deliveries', 'delivery_attempts']) expect(await partitionExists(`${table}_p${suffix(day)}`)).toBe(false);
    expect(await remainingEventIds(accountId)).toEqual([...oldPending, ...recent].map((event) => event.eventId));
    // The attempts went with their day, except those of the pending events, which moved with them (their deliveries and open rows too).
    expect(await attemptCounts(old)).toEqual([0, 0, 0, 0]);
    expect(await attemptCounts(oldPending)).toEqual([0, 2]);
    expect(await attemptCounts(recent)).toEqual([1, 1, 1, 1, 1]);
    const primaries = (events: SeededEvent[]) => events.map((event) => `${event.seq}/primary`);
    expect(await remainingDeliveries([...old, ...oldPending])).toEqual({ deliveries: primaries(oldPending), open: primaries(oldPending) });
    // The day's tallies went with it and were counted again from what it kept: the pending events.
    await expectBooksToMatchRows(db, days(day));

    // A kept delivery that later ends (as the recorder ends it: failed, its open row closed, its book entry) goes in the next round, with its attempts.
    const [{ created_at: createdAt }] = await db.query<{ created_at: Date }[]>(`SELECT created_at FROM events WHERE seq = $1`, [oldPending[1].seq]);
    const ended = await workerA.app.get(OutcomeStore, { strict: false }).record({
      seq: oldPending[1].seq,
      destinationId: 'primary',
      accountId,
      series: 0,
      seriesAttempts: 2,
      createdAt,
      status: 'failed',
      nextAttemptAt: null,
      deliveredAt: null,
      lastError: 'HTTP 500: server error',
      attempt: null,
      open: { kind: 'close' },
    });
    expect(ended).toBe(true);
    await expectBooksToMatchRows(db, days(day));
    await retentionOf(workerA).runOnce();
    expect(await remainingEventIds(accountId)).toEqual([oldPending[0], ...recent].map((event) => event.eventId));
    expect(await attemptCounts([oldPending[1]])).toEqual([0]);
    expect(await remainingDeliveries([oldPending[1]])).toEqual({ deliveries: [], open: [] });
    await expectBooksToMatchRows(db, days(day));
  });

  it("keeps an event another destination still owes, and drops the deliveries held only by a pause, with their open rows", async () => {
    const { accountId, destinationId } = await pausedAccount(true);
    const { accountId: otherAccount, destinationId: retrying } = await pausedAccount(false);
    const day = await expiredDay();
    // Held by the primary's pause; delivered at the primary, held by the other destination's pause.
    const held = await seedEvents(accountId, day + 3_600_000, [
      { status: 'queued', paused: true },
      { status: 'delivered', attempts: 1, other: { destinationId, status: 'queued', paused: true } },
    ]);
    // Failed at the primary, its delivery to the other destination waiting for a retry: owed.
    const owed = await seedEvents(otherAccount, day + 3_600_000, [{ status: 'failed', attempts: 3, other: { destinationId: retrying, status: 'retrying' } }]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.droppedPartitions).toEqual(expect.arrayContaining([`events_p${suffix(day)}`]));
    expect(result.keptPending).toBeGreaterThanOrEqual(1);
    for (const table of ['events', 'deliveries', 'delivery_attempts']) expect(await partitionExists(`${table}_p${suffix(day)}`)).toBe(false);
    // A paused destination does not keep its account's events past RETENTION_DAYS.
    expect(await remainingEventIds(accountId)).toEqual([]);
    expect(await remainingDeliveries(held)).toEqual({ deliveries: [], open: [] });
    expect(await attemptCounts(held)).toEqual([0, 0]);
    // The owed one stays whole: both deliveries, the primary's attempts, the waiting delivery's open row.
    expect(await remainingEventIds(otherAccount)).toEqual([owed[0].eventId]);
    expect(await remainingDeliveries(owed)).toEqual({ deliveries: [`${owed[0].seq}/${retrying}`, `${owed[0].seq}/primary`].sort(), open: [`${owed[0].seq}/${retrying}`] });
    expect(await attemptCounts(owed)).toEqual([3]);
    await expectBooksToMatchRows(db, days(day));
  });

  it('drops expired days of bot calls and keeps recent ones', async () => {
    const accountId = await newAccountId();
    const day = await expiredDay();
    const [, insideCutoff, fresh] = await seedBotCalls(accountId, [day + 1000, Date.now() - (RETENTION_DAYS - 1) * DAY_MS, Date.now()]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.droppedPartitions).toContain(`bot_calls_p${suffix(day)}`);
    // The one inside the window predates every daily partition: it waits in the default partition.
    expect(await remainingBotCalls(accountId)).toEqual([insideCutoff, fresh]);
  });

  it('deletes expired rows of the default partition in batches, including rows sharing a timestamp across batches', async () => {
    const accountId = await newAccountId();
    const total = RETENTION_BATCH_SIZE * 2 + 37;
    // A day no partition covers: every row lands in events_default, all with the same created_at.
    const at = nextOldDay - 400 * DAY_MS;
    const backlog = await seedEvents(
      accountId,
      at,
      Array.from({ length: total }, (_, index) => ({ status: FINAL_STATUSES[index % FINAL_STATUSES.length], attempts: 1 })),
    );
    const [keptPending] = await seedEvents(accountId, at - DAY_MS, [{ status: 'retrying', attempts: 1 }]);
    // Pending, but held only by a pause: past the window it goes like a final one.
    const paused = await pausedAccount(true);
    const [heldOnly] = await seedEvents(paused.accountId, at, [{ status: 'delivered', attempts: 1, other: { destinationId: paused.destinationId, status: 'queued', paused: true } }]);
    const [{ partition }] = await db.query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM events WHERE seq = $1`, [
      backlog[0].seq,
    ]);
    expect(partition).toBe('events_default');

    const result = await retentionOf(workerA).runOnce();

    expect(result.events).toBeGreaterThanOrEqual(total + 1);
    expect(await remainingEventIds(accountId)).toEqual([keptPending.eventId]);
    expect(await remainingEventIds(paused.accountId)).toEqual([]);
    expect(await remainingDeliveries([heldOnly, keptPending])).toEqual({ deliveries: [`${keptPending.seq}/primary`], open: [`${keptPending.seq}/primary`] });
    const [{ count }] = await db.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM delivery_attempts WHERE event_seq = ANY($1::bigint[])`, [
      backlog.map((event) => event.seq),
    ]);
    expect(count).toBe(0);
    // Their ids are free again; the kept event's id stays taken.
    const [{ keys }] = await db.query<{ keys: number }[]>(`SELECT count(*)::int AS keys FROM event_keys WHERE event_id = ANY($1::varchar[])`, [
      [...backlog, keptPending].map((event) => event.eventId),
    ]);
    expect(keys).toBe(1);
    // Deleted from the default partition by name: the trim untallied them itself, with book entries.
    await expectBooksToMatchRows(db, days(at - DAY_MS, at));
  });

  it('deletes stats rollup rows before the window, in batches, and keeps the ones inside it', async () => {
    const accountId = await newAccountId();
    const minute = 60_000;
    const expiredStart = Date.now() - (RETENTION_DAYS + 2) * DAY_MS;
    const expired = RETENTION_BATCH_SIZE + 11;
    await db.query(
      `INSERT INTO delivery_rollups (granularity, account_id, bucket_start, delivered, latency_counts)
       SELECT g, $1, to_timestamp(($2::float8 + n * $3::float8) / 1000), 1, array_fill(0::bigint, ARRAY[$4::int])
         FROM generate_series(0, $5::int - 1) AS n, unnest(ARRAY['minute', 'hour']) AS g`,
      [accountId, expiredStart, minute, LATENCY_BUCKETS, Math.ceil(expired / 2)],
    );
    const keptAt = new Date(Date.now() - (RETENTION_DAYS - 1) * DAY_MS);
    await db.query(
      `INSERT INTO delivery_rollups (granularity, account_id, bucket_start, delivered, latency_counts)
       VALUES ('hour', $1, $2, 3, array_fill(0::bigint, ARRAY[$3::int]))`,
      [accountId, keptAt, LATENCY_BUCKETS],
    );

    const result = await retentionOf(workerA).runOnce();

    expect(result.rollups).toBeGreaterThanOrEqual(Math.ceil(expired / 2) * 2);
    const rows = await db.query<{ delivered: string }[]>(`SELECT delivered::text FROM delivery_rollups WHERE account_id = $1`, [accountId]);
    expect(rows).toEqual([{ delivered: '3' }]);
  });

  it('skips the round while another worker holds the lock', async () => {
    const accountId = await newAccountId();
    const day = await expiredDay();
    const old = await seedEvents(accountId, day + 1000, [{ status: 'delivered', attempts: 1 }]);
    const [oldBotCall] = await seedBotCalls(accountId, [day + 1000]);

    const holder = db.createQueryRunner();
    try {
      // Blocking, in case a round of some worker holds it right now; it is ours once this returns.
      await holder.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
      expect(await retentionOf(workerB).runOnce()).toEqual<RetentionResult>({ droppedPartitions: [], keptPending: 0, events: 0, botCalls: 0, eventKeys: 0, rollups: 0 });
      expect(await remainingEventIds(accountId)).toEqual([old[0].eventId]);
      expect(await remainingBotCalls(accountId)).toEqual([oldBotCall]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
      await holder.release();
    }

    const result = await retentionOf(workerB).runOnce();
    expect(result.droppedPartitions).toEqual(expect.arrayContaining([`events_p${suffix(day)}`, `bot_calls_p${suffix(day)}`]));
    expect(await remainingEventIds(accountId)).toEqual([]);
    expect(await remainingBotCalls(accountId)).toEqual([]);
  });

  it('lets two workers run at once: both finish and every expired day is dropped once', async () => {
    const accountId = await newAccountId();
    const days = [await expiredDay(), await expiredDay()];
    for (const day of days) {
      await seedEvents(
        accountId,
        day + 1000,
        Array.from({ length: 250 }, (_, index) => ({ status: FINAL_STATUSES[index % FINAL_STATUSES.length], attempts: 2 })),
      );
      await seedBotCalls(accountId, Array.from({ length: 150 }, () => day + 1000));
    }
    const [kept] = await seedEvents(accountId, days[0] + 5000, [{ status: 'queued' }]);

    const [first, second] = await Promise.all([retentionOf(workerA).runOnce(), retentionOf(workerB).runOnce()]);

    const dropped = [...first.droppedPartitions, ...second.droppedPartitions].filter((name) => days.some((day) => name.endsWith(suffix(day))));
    expect(dropped.sort()).toEqual(days.flatMap((day) => [`bot_calls_p${suffix(day)}`, `events_p${suffix(day)}`]).sort());
    expect(await remainingEventIds(accountId)).toEqual([kept.eventId]);
    expect(await remainingBotCalls(accountId)).toEqual([]);
  });

  it('counts dropped partitions, kept pending events and deleted rows in /metrics', async () => {
    const accountId = await newAccountId();
    const day = await expiredDay();
    await seedEvents(accountId, day + 1000, [{ status: 'filtered' }, { status: 'queued' }]);
    await seedEvents(accountId, nextOldDay - 500 * DAY_MS, [{ status: 'failed' }]);
    const before = await metrics(workerA);

    const result = await retentionOf(workerA).runOnce();

    const after = await metrics(workerA);
    expect(after.partitions - before.partitions).toBe(result.droppedPartitions.length);
    expect(after.kept - before.kept).toBe(result.keptPending);
    expect(after.events - before.events).toBe(result.events);
    expect(result.droppedPartitions.length).toBeGreaterThanOrEqual(1);
    expect(result.keptPending).toBeGreaterThanOrEqual(1);
    expect(result.events).toBeGreaterThanOrEqual(1);
  });
});

/** Reads the retention counters from the worker's real /metrics endpoint. */
async function metrics(worker: RunningApp): Promise<{ partitions: number; kept: number; events: number }> {
  const text = await (await fetch(`${worker.url}/metrics`)).text();
  const value = (pattern: string): number => {
    const match = new RegExp(`^${pattern} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) : 0;
  };
  return {
    partitions: value('retention_dropped_partitions_total'),
    kept: value('retention_kept_pending_events_total'),
    events: value('retention_deleted_rows_total\\{table="events"\\}'),
  };
}
