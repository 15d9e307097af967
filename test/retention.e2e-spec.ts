import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { RETENTION_BATCH_SIZE, RETENTION_LOCK_KEY, RetentionService } from '../apps/delivery-worker/src/retention/retention.service';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from './support/apps';
import { createAccount } from './support/fixtures';
import { useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('retention');

/**
 * The longest retention allowed: other suites share this database and seed final events dated in 2024,
 * which a shorter retention would delete under them. "Old" rows here are older still.
 */
const RETENTION_DAYS = 3650;
const OLD_DAYS = RETENTION_DAYS + 5;
const FINAL_STATUSES = ['delivered', 'failed', 'filtered', 'no_endpoint'] as const;
type Status = (typeof FINAL_STATUSES)[number] | 'queued' | 'retrying';

interface SeedEvent {
  status: Status;
  ageDays: number;
  attempts?: number;
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

describe('retention', () => {
  let configApi: RunningApp;
  let workerA: RunningApp;
  let workerB: RunningApp;
  let db: DataSource;
  let seedCounter = 0;

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    workerA = await startApp(DeliveryWorkerModule, WORKER_SETTINGS);
    workerB = await startApp(DeliveryWorkerModule, WORKER_SETTINGS);
    db = workerA.app.get(DataSource);
  });

  afterAll(async () => {
    await workerB?.close();
    await workerA?.close();
    await configApi?.close();
  });

  const retentionOf = (worker: RunningApp) => worker.app.get(RetentionService, { strict: false });

  async function newAccountId(): Promise<number> {
    return (await createAccount(configApi)).id;
  }

  /**
   * Rows are written straight to the tables with their age. Pending rows are due only tomorrow, so no
   * worker's reconciler (this suite's or another's) picks them up and moves them to a final status.
   */
  async function seedEvents(accountId: number, events: SeedEvent[]): Promise<SeededEvent[]> {
    const ids = events.map(() => {
      seedCounter += 1;
      return `retention-${process.pid}-${Date.now().toString(36)}-${seedCounter}`;
    });
    const rows = await db.query<{ seq: string; event_id: string }[]>(
      `INSERT INTO events (event_id, account_id, action, message, status, attempts, created_at, updated_at, next_attempt_at, delivered_at)
       SELECT t.event_id, $1, 'Customer_create', '{"id":1}', t.status, t.attempts,
              now() - make_interval(days => t.age_days), now() - make_interval(days => t.age_days),
              CASE WHEN t.status IN ('queued', 'retrying') THEN now() + interval '1 day' END,
              CASE WHEN t.status = 'delivered' THEN now() - make_interval(days => t.age_days) END
         FROM unnest($2::varchar[], $3::varchar[], $4::int[], $5::int[]) AS t(event_id, status, age_days, attempts)
       RETURNING seq::text AS seq, event_id`,
      [accountId, ids, events.map((event) => event.status), events.map((event) => event.ageDays), events.map((event) => event.attempts ?? 0)],
    );
    const seqById = new Map(rows.map((row) => [row.event_id, row.seq]));
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status)
       SELECT e.seq, 0, n, e.created_at, 12, 'https://receiver.example.com/hook', '{}', '{"action":"Customer_create"}', 500
         FROM events e CROSS JOIN LATERAL generate_series(1, e.attempts) AS n
        WHERE e.seq = ANY($1::bigint[])`,
      [rows.map((row) => row.seq)],
    );
    return events.map((event, index) => ({ ...event, eventId: ids[index], seq: seqById.get(ids[index]) ?? '' }));
  }

  async function seedBotCalls(accountId: number, ageDays: number[]): Promise<string[]> {
    const rows = await db.query<{ id: string }[]>(
      `INSERT INTO bot_calls (account_id, type, integration_name, outcome, duration_ms, created_at)
       SELECT $1, 'message_trigger', 'faq', 'ok', 20, now() - make_interval(days => age)
         FROM unnest($2::int[]) WITH ORDINALITY AS t(age, ord)
        ORDER BY ord
       RETURNING id::text AS id`,
      [accountId, ageDays],
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
    const rows = await db.query<{ id: string }[]>(`SELECT id::text AS id FROM bot_calls WHERE account_id = $1 ORDER BY id`, [accountId]);
    return rows.map((row) => row.id);
  }

  it('deletes old events in every final status with their attempts, and keeps pending and recent ones', async () => {
    const accountId = await newAccountId();
    const old = await seedEvents(
      accountId,
      FINAL_STATUSES.map((status) => ({ status, ageDays: OLD_DAYS, attempts: status === 'delivered' || status === 'failed' ? 3 : 0 })),
    );
    const oldPending = await seedEvents(accountId, [
      { status: 'queued', ageDays: OLD_DAYS },
      { status: 'retrying', ageDays: OLD_DAYS, attempts: 2 },
    ]);
    // Within RETENTION_DAYS: just inside the cutoff, and new.
    const recent = await seedEvents(accountId, [
      ...FINAL_STATUSES.map((status) => ({ status, ageDays: RETENTION_DAYS - 1, attempts: 1 })),
      { status: 'delivered' as const, ageDays: 0, attempts: 1 },
    ]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.events).toBeGreaterThanOrEqual(old.length);
    expect(await remainingEventIds(accountId)).toEqual([...oldPending, ...recent].map((event) => event.eventId));
    // ON DELETE CASCADE took the attempts of the deleted events, and only those.
    expect(await attemptCounts(old)).toEqual([0, 0, 0, 0]);
    expect(await attemptCounts(oldPending)).toEqual([0, 2]);
    expect(await attemptCounts(recent)).toEqual([1, 1, 1, 1, 1]);

    // A pending event that later reaches a final status goes in the next round.
    await db.query(`UPDATE events SET status = 'failed', next_attempt_at = NULL WHERE seq = $1`, [oldPending[1].seq]);
    await retentionOf(workerA).runOnce();
    expect(await remainingEventIds(accountId)).toEqual([oldPending[0], ...recent].map((event) => event.eventId));
    expect(await attemptCounts([oldPending[1]])).toEqual([0]);
  });

  it('deletes old bot calls and keeps recent ones', async () => {
    const accountId = await newAccountId();
    const [, , insideCutoff, fresh] = await seedBotCalls(accountId, [OLD_DAYS + 400, OLD_DAYS, RETENTION_DAYS - 1, 0]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.botCalls).toBeGreaterThanOrEqual(2);
    expect(await remainingBotCalls(accountId)).toEqual([insideCutoff, fresh]);
  });

  it('works through a backlog larger than one batch, including rows sharing a timestamp across batches', async () => {
    const accountId = await newAccountId();
    const total = RETENTION_BATCH_SIZE * 2 + 37;
    // Every row has the same created_at (one statement's now()), so batch boundaries fall inside a tie.
    const backlog = await seedEvents(
      accountId,
      Array.from({ length: total }, (_, index) => ({ status: FINAL_STATUSES[index % FINAL_STATUSES.length], ageDays: OLD_DAYS, attempts: 1 })),
    );
    const [keptPending] = await seedEvents(accountId, [{ status: 'retrying', ageDays: OLD_DAYS + 1 }]);

    const result = await retentionOf(workerA).runOnce();

    expect(result.events).toBeGreaterThanOrEqual(total);
    expect(await remainingEventIds(accountId)).toEqual([keptPending.eventId]);
    const [{ count }] = await db.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM delivery_attempts WHERE event_seq = ANY($1::bigint[])`,
      [backlog.map((event) => event.seq)],
    );
    expect(count).toBe(0);
  });

  it('skips the round while another worker holds the lock', async () => {
    const accountId = await newAccountId();
    const old = await seedEvents(accountId, [{ status: 'delivered', ageDays: OLD_DAYS, attempts: 1 }]);
    const [oldBotCall] = await seedBotCalls(accountId, [OLD_DAYS]);

    const holder = db.createQueryRunner();
    try {
      // Blocking, in case a round of some worker holds it right now; it is ours once this returns.
      await holder.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
      expect(await retentionOf(workerB).runOnce()).toEqual({ events: 0, botCalls: 0 });
      expect(await remainingEventIds(accountId)).toEqual([old[0].eventId]);
      expect(await remainingBotCalls(accountId)).toEqual([oldBotCall]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
      await holder.release();
    }

    const result = await retentionOf(workerB).runOnce();
    expect(result.events).toBeGreaterThanOrEqual(1);
    expect(result.botCalls).toBeGreaterThanOrEqual(1);
    expect(await remainingEventIds(accountId)).toEqual([]);
    expect(await remainingBotCalls(accountId)).toEqual([]);
  });

  it('lets two workers run at once: both finish and every old row is deleted once', async () => {
    const accountId = await newAccountId();
    const old = await seedEvents(
      accountId,
      Array.from({ length: 500 }, (_, index) => ({ status: FINAL_STATUSES[index % FINAL_STATUSES.length], ageDays: OLD_DAYS, attempts: 2 })),
    );
    await seedBotCalls(accountId, Array.from({ length: 300 }, () => OLD_DAYS));
    const [kept] = await seedEvents(accountId, [{ status: 'queued', ageDays: OLD_DAYS }]);

    const [first, second] = await Promise.all([retentionOf(workerA).runOnce(), retentionOf(workerB).runOnce()]);

    expect(first.events + second.events).toBeGreaterThanOrEqual(old.length);
    expect(first.botCalls + second.botCalls).toBeGreaterThanOrEqual(300);
    expect(await remainingEventIds(accountId)).toEqual([kept.eventId]);
    expect(await remainingBotCalls(accountId)).toEqual([]);
  });

  it('counts deleted rows per table in /metrics', async () => {
    const accountId = await newAccountId();
    await seedEvents(accountId, [{ status: 'filtered', ageDays: OLD_DAYS }]);
    await seedBotCalls(accountId, [OLD_DAYS]);
    const before = await deletedRowsMetric(workerA);

    const result = await retentionOf(workerA).runOnce();

    const after = await deletedRowsMetric(workerA);
    expect(after.events - before.events).toBe(result.events);
    expect(after.bot_calls - before.bot_calls).toBe(result.botCalls);
    expect(result.events).toBeGreaterThanOrEqual(1);
    expect(result.botCalls).toBeGreaterThanOrEqual(1);
  });
});

/** Reads retention_deleted_rows_total from the worker's real /metrics endpoint. */
async function deletedRowsMetric(worker: RunningApp): Promise<{ events: number; bot_calls: number }> {
  const text = await (await fetch(`${worker.url}/metrics`)).text();
  const value = (table: string): number => {
    const match = new RegExp(`^retention_deleted_rows_total\\{table="${table}"\\} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) : 0;
  };
  return { events: value('events'), bot_calls: value('bot_calls') };
}
