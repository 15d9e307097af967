import { Client } from 'pg';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, useApps } from '../support/apps';
import { TaskWorkerModule } from '../support/task-worker';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { ADMIN_HEADERS, createAccount, type TestAccount } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { useAppOnHangingRedis } from '../support/hanging-port';
import { TASK_POLL_MS } from '../../apps/delivery-worker/src/tasks/leased-task-runner';
import { type SeedEvent, seedPrimaryEvents } from '../support/seeded-events';

/**
 * Own database and Redis prefix (inside the run's namespace, removed afterwards): the suite asserts
 * on `queued` rows and waiting jobs, which a delivery worker or reconciler started by another suite
 * of the same run would otherwise consume. Bulk redeliveries run in a worker's task runners (started
 * here without the delivery pipeline): config-api only records them.
 */
const namespace = new IsolatedNamespace('admin-events');
const ISOLATION = namespace.overrides;

/** Response bodies are checked field by field, so they are typed loosely here. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { configApi } = useApps({ configApi: ConfigApiModule, tasks: TaskWorkerModule }, { namespace });
let db: Client;
/** The namespace's delivery queue: jobs by id or state across every shard. */
let queue: IsolatedNamespace;

async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = ADMIN_HEADERS,
  app: RunningApp = configApi,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${app.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

function seedEvents(events: SeedEvent[]): Promise<{ seq: string; eventId: string }[]> {
  return seedPrimaryEvents(db, events);
}

async function eventRow(eventId: string): Promise<Json> {
  const result = await db.query<Json>(
    `SELECT e.seq::text AS seq, d.status, d.series, d.series_attempts, d.attempts, d.next_attempt_at, d.last_error, d.delivered_at
       FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.event_id = $1`,
    [eventId],
  );
  return result.rows[0];
}

/** Walks every page of a listing and returns the event ids in order. */
async function listAll(query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await call('GET', `/admin/v1/events?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status).toBe(200);
    expect(page.body.items.length).toBeLessThanOrEqual(limit);
    ids.push(...(page.body.items as { event_id: string }[]).map((item) => item.event_id));
    cursor = page.body.next_cursor as string | null;
    pages += 1;
    if (pages > 100) throw new Error('paging does not terminate');
  } while (cursor !== null);
  return { ids, pages };
}

/** percentile_cont: linear interpolation between the closest ranks. */
function percentile(sorted: number[], fraction: number): number {
  const position = fraction * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

beforeAll(() => {
  db = namespace.db;
  queue = namespace;
});

describe('admin authentication', () => {
  it.each([
    ['GET', '/admin/v1/events'],
    ['GET', '/admin/v1/events/some-id'],
    ['POST', '/admin/v1/events/some-id/redeliver'],
    ['POST', '/admin/v1/accounts/1/redeliver'],
    ['GET', '/admin/v1/stats'],
  ] as const)('%s %s answers 401 without or with a wrong token', async (method, path) => {
    const body = method === 'POST' ? { status: 'failed' } : undefined;
    const missing = await call(method, path, body, { 'content-type': 'application/json' });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe('unauthorized');
    const wrong = await call(method, path, body, { 'content-type': 'application/json', authorization: 'Bearer wrong-token-0123456789' });
    expect(wrong.status).toBe(401);
  });
});

describe('GET /admin/v1/events', () => {
  let account: TestAccount;
  let other: TestAccount;
  let seeded: { seq: string; eventId: string }[];
  const day = (offset: number) => new Date(Date.UTC(2024, 0, 10 + offset, 12, 0, 0));

  beforeAll(async () => {
    account = await createAccount(configApi);
    other = await createAccount(configApi);
    seeded = await seedEvents([
      { accountId: account.id, action: 'Customer_create', status: 'delivered', createdAt: day(0), deliveredAt: day(0), attempts: 1 },
      { accountId: account.id, action: 'Customer_update', status: 'failed', createdAt: day(1), attempts: 9, lastError: 'HTTP 500' },
      { accountId: account.id, action: 'Customer_create', status: 'filtered', createdAt: day(2) },
      { accountId: other.id, action: 'Customer_create', status: 'failed', createdAt: day(3), lastError: 'timeout' },
      { accountId: account.id, action: 'ShutQueue_create', status: 'no_endpoint', createdAt: day(4) },
    ]);
  });

  it('lists newest first with the documented fields', async () => {
    const answer = await call('GET', `/admin/v1/events?account_id=${account.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.next_cursor).toBeNull();
    expect(answer.body.items.map((item: Json) => item.event_id)).toEqual([seeded[4], seeded[2], seeded[1], seeded[0]].map((event) => event.eventId));
    expect(answer.body.items[2]).toEqual({
      event_id: seeded[1].eventId,
      account_id: account.id,
      action: 'Customer_update',
      status: 'failed',
      attempts: 9,
      created_at: day(1).toISOString(),
      delivered_at: null,
      last_error: 'HTTP 500',
      erased: false,
    });
    expect(answer.body.items[3].delivered_at).toBe(day(0).toISOString());
  });

  it.each([
    ['action', (id: number) => `account_id=${id}&action=Customer_create`, [2, 0]],
    ['status', (id: number) => `account_id=${id}&status=failed`, [1]],
    ['since', (id: number) => `account_id=${id}&since=${encodeURIComponent(day(2).toISOString())}`, [4, 2]],
    ['until', (id: number) => `account_id=${id}&until=2024-01-12T12:00:00Z`, [1, 0]],
    ['since and until', (id: number) => `account_id=${id}&since=2024-01-11&until=2024-01-13T00:00:00%2B00:00`, [2, 1]],
    ['action and status together', (id: number) => `account_id=${id}&action=Customer_create&status=delivered`, [0]],
  ])('filters by %s', async (_label, query, expected) => {
    const answer = await call('GET', `/admin/v1/events?${query(account.id)}`);
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item: Json) => item.event_id)).toEqual(expected.map((index) => seeded[index].eventId));
  });

  it('filters by account_id alone and by status across accounts', async () => {
    const byOther = await call('GET', `/admin/v1/events?account_id=${other.id}`);
    expect(byOther.body.items.map((item: Json) => item.event_id)).toEqual([seeded[3].eventId]);
    const failed = await call('GET', '/admin/v1/events?status=failed&limit=500');
    const failedIds = failed.body.items.map((item: Json) => item.event_id);
    expect(failedIds).toEqual(expect.arrayContaining([seeded[1].eventId, seeded[3].eventId]));
    expect(failed.body.items.every((item: Json) => item.status === 'failed')).toBe(true);
  });

  it('pages through more than one page without gaps or repeats, unaffected by new events', async () => {
    const paged = await createAccount(configApi);
    const events = await seedEvents(Array.from({ length: 23 }, () => ({ accountId: paged.id })));
    const newestFirst = events.map((event) => event.eventId).reverse();

    const first = await call('GET', `/admin/v1/events?account_id=${paged.id}&limit=5`);
    expect(first.body.items).toHaveLength(5);
    expect(typeof first.body.next_cursor).toBe('string');
    // An event arriving between pages lands above the cursor and never shifts later pages.
    await seedEvents([{ accountId: paged.id }]);
    const rest: string[] = [];
    let cursor = first.body.next_cursor as string | null;
    while (cursor) {
      const page = await call('GET', `/admin/v1/events?account_id=${paged.id}&limit=5&cursor=${encodeURIComponent(cursor)}`);
      expect(page.status).toBe(200);
      rest.push(...page.body.items.map((item: Json) => item.event_id));
      cursor = page.body.next_cursor;
    }
    expect([...first.body.items.map((item: Json) => item.event_id), ...rest]).toEqual(newestFirst);

    const all = await listAll(`account_id=${paged.id}`, 6);
    expect(all.ids).toHaveLength(24);
    expect(new Set(all.ids).size).toBe(24);
    expect(all.pages).toBe(4);
  });

  it('defaults to 50 items and accepts up to 500', async () => {
    const many = await createAccount(configApi);
    await seedEvents(Array.from({ length: 55 }, () => ({ accountId: many.id })));
    const byDefault = await call('GET', `/admin/v1/events?account_id=${many.id}`);
    expect(byDefault.body.items).toHaveLength(50);
    expect(byDefault.body.next_cursor).not.toBeNull();
    const max = await call('GET', `/admin/v1/events?account_id=${many.id}&limit=500`);
    expect(max.body.items).toHaveLength(55);
    expect(max.body.next_cursor).toBeNull();
    const exact = await call('GET', `/admin/v1/events?account_id=${many.id}&limit=55`);
    expect(exact.body.items).toHaveLength(55);
    expect(exact.body.next_cursor).toBeNull();
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['account_id=abc', 'account_id'],
    ['account_id=99999999999', 'account_id'],
    ['action=Nope', 'action'],
    ['status=lost', 'status'],
    ['since=yesterday', 'since'],
    ['since=2024-02-30', 'since'],
    ['until=2024-01-01T25:00:00Z', 'until'],
    ['since=2024-01-02&until=2024-01-01', 'until'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('v1:abc').toString('base64url')}`, 'cursor'],
    ['colour=blue', 'colour'],
  ])('answers 400 naming the parameter for %s', async (query, path) => {
    const answer = await call('GET', `/admin/v1/events?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_query');
    expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });
});

describe('GET /admin/v1/events/:event_id', () => {
  it('shows the event with its message, series and attempts in order', async () => {
    const account = await createAccount(configApi);
    const message = { id: 42, tags: ['vip'], nested: { b: 1, a: [null, true] } };
    const [event] = await seedEvents([
      { accountId: account.id, status: 'failed', message, attempts: 3, series: 1, seriesAttempts: 2, lastError: 'HTTP 503' },
    ]);
    const started = Date.UTC(2025, 0, 31, 12, 0, 0);
    for (const attempt of [2, 1, 3]) {
      await db.query(
        `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, request_body,
                                        response_status, response_headers, response_body, error)
         VALUES ($1, 'primary', $2, $3, $4, $5, 'https://receiver.example/hook', $6::json, $7, $8, $9::json, $10, $11)`,
        [
          event.seq,
          attempt === 1 ? 0 : 1,
          attempt,
          new Date(started + attempt * 1000),
          attempt * 10,
          JSON.stringify({ 'content-type': 'application/json', 'webhook-id': event.eventId }),
          '{"action":"Customer_create"}',
          attempt === 3 ? null : 503,
          attempt === 3 ? null : JSON.stringify({ 'retry-after': '5' }),
          attempt === 3 ? null : 'busy',
          attempt === 3 ? 'timeout after 10000 ms' : null,
        ],
      );
    }

    const answer = await call('GET', `/admin/v1/events/${encodeURIComponent(event.eventId)}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      event_id: event.eventId,
      account_id: account.id,
      action: 'Customer_create',
      status: 'failed',
      series: 1,
      attempt_count: 3,
      last_error: 'HTTP 503',
      delivered_at: null,
      message,
    });
    expect(answer.body.attempts.map((attempt: Json) => attempt.attempt)).toEqual([1, 2, 3]);
    expect(answer.body.attempts[1]).toEqual({
      attempt: 2,
      series: 1,
      started_at: new Date(started + 2000).toISOString(),
      duration_ms: 20,
      url: 'https://receiver.example/hook',
      request_headers: { 'content-type': 'application/json', 'webhook-id': event.eventId },
      request_body: '{"action":"Customer_create"}',
      response_status: 503,
      response_headers: { 'retry-after': '5' },
      response_body: 'busy',
      error: null,
    });
    expect(answer.body.attempts[2]).toMatchObject({ response_status: null, response_headers: null, error: 'timeout after 10000 ms' });
  });

  it('answers 404 for an unknown event', async () => {
    for (const id of ['no-such-event', encodeURIComponent('bad\u0000id'), 'x'.repeat(200)]) {
      const answer = await call('GET', `/admin/v1/events/${id}`);
      expect(answer.status).toBe(404);
      expect(answer.body.error).toBe('not_found');
    }
  });
});

describe('POST /admin/v1/events/:event_id/redeliver', () => {
  it('starts a new series now and enqueues a job with a new id', async () => {
    const account = await createAccount(configApi);
    const [event] = await seedEvents([
      { accountId: account.id, status: 'delivered', attempts: 2, seriesAttempts: 2, deliveredAt: new Date(), lastError: 'HTTP 500 before' },
    ]);
    const answer = await call('POST', `/admin/v1/events/${event.eventId}/redeliver`);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ event_id: event.eventId, status: 'queued', series: 1 });

    const row = await eventRow(event.eventId);
    expect(row).toMatchObject({ status: 'queued', series: 1, series_attempts: 0, attempts: 2, last_error: null, delivered_at: null });
    expect(Math.abs((row.next_attempt_at as Date).getTime() - Date.now())).toBeLessThan(60_000);
    const job = await queue.getJob(deliveryJobId({ eventSeq: event.seq, series: 1, attempt: 0 }));
    expect(job?.data).toEqual({ eventSeq: event.seq, accountId: account.id, series: 1, attempt: 0 });

    const again = await call('POST', `/admin/v1/events/${event.eventId}/redeliver`);
    expect(again.body.series).toBe(2);
    expect(await queue.getJob(deliveryJobId({ eventSeq: event.seq, series: 2, attempt: 0 }))).toBeDefined();
  });

  it('answers 404 for an unknown event', async () => {
    const answer = await call('POST', '/admin/v1/events/no-such-event/redeliver');
    expect(answer.status).toBe(404);
  });
});

/** Bulk redelivery runs as a background task in a worker: its events are restarted once the task is done. */
async function taskDone(taskId: string, app: RunningApp = configApi, timeoutMs?: number): Promise<void> {
  await waitFor(
    `redelivery task ${taskId} to finish`,
    async () => {
      const task = await call('GET', `/admin/v1/redeliveries/${taskId}`, undefined, ADMIN_HEADERS, app);
      return task.body.status === 'done';
    },
    { timeoutMs },
  );
}

describe('POST /admin/v1/accounts/:id/redeliver', () => {
  it('restarts every event of the account in that status, in chunks, and enqueues each', async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    const failed = await seedEvents(Array.from({ length: 2100 }, () => ({ accountId: account.id, status: 'failed', lastError: 'HTTP 500', seriesAttempts: 9 })));
    const untouched = await seedEvents([
      { accountId: account.id, status: 'delivered', deliveredAt: new Date() },
      { accountId: account.id, status: 'retrying' },
      { accountId: other.id, status: 'failed' },
    ]);

    const answer = await call('POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed' });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ count: 2100, task_id: expect.any(String) });
    await taskDone(answer.body.task_id as string);

    const counts = await db.query<{ status: string; series: number; count: number }>(
      `SELECT status, series, count(*)::int AS count FROM deliveries WHERE account_id = $1 AND destination_id = 'primary' GROUP BY status, series ORDER BY status, series`,
      [account.id],
    );
    expect(counts.rows).toEqual([
      { status: 'delivered', series: 0, count: 1 },
      { status: 'queued', series: 1, count: 2100 },
      { status: 'retrying', series: 0, count: 1 },
    ]);
    expect((await eventRow(failed[0].eventId)).last_error).toBeNull();
    expect(await eventRow(untouched[2].eventId)).toMatchObject({ status: 'failed', series: 0 });

    const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'paused']);
    const jobIds = new Set(jobs.map((job) => job.id));
    const missing = failed.filter((event) => !jobIds.has(deliveryJobId({ eventSeq: event.seq, series: 1, attempt: 0 })));
    expect(missing).toHaveLength(0);
    expect(jobIds.has(deliveryJobId({ eventSeq: untouched[0].seq, series: 1, attempt: 0 }))).toBe(false);
  });

  it('honours since and until on created_at', async () => {
    const account = await createAccount(configApi);
    const hour = (n: number) => new Date(Date.UTC(2024, 5, 1, n, 0, 0));
    const events = await seedEvents([0, 1, 2, 3].map((n) => ({ accountId: account.id, status: 'no_endpoint', createdAt: hour(n) })));
    const answer = await call('POST', `/admin/v1/accounts/${account.id}/redeliver`, {
      status: 'no_endpoint',
      since: hour(1).toISOString(),
      until: hour(3).toISOString(),
    });
    expect(answer.body).toEqual({ count: 2, task_id: expect.any(String) });
    await taskDone(answer.body.task_id as string);
    const statuses: string[] = [];
    for (const event of events) statuses.push((await eventRow(event.eventId)).status as string);
    expect(statuses).toEqual(['no_endpoint', 'queued', 'queued', 'no_endpoint']);
  });

  it('answers 0 when nothing matches, 404 for an unknown account, 422 for a bad body and 400 for a bad id', async () => {
    const account = await createAccount(configApi);
    expect((await call('POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'filtered' })).body).toEqual({ count: 0, task_id: expect.any(String) });
    const unknown = await call('POST', '/admin/v1/accounts/2000000000/redeliver', { status: 'failed' });
    expect(unknown.status).toBe(404);
    for (const [path, body, field, status] of [
      [`/admin/v1/accounts/${account.id}/redeliver`, { status: 'queued' }, 'status', 422],
      [`/admin/v1/accounts/${account.id}/redeliver`, {}, 'status', 422],
      [`/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed', since: 'soon' }, 'since', 422],
      [`/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed', since: '2024-01-02', until: '2024-01-01' }, 'until', 422],
      ['/admin/v1/accounts/abc/redeliver', { status: 'failed' }, 'id', 400],
      ['/admin/v1/accounts/99999999999/redeliver', { status: 'failed' }, 'id', 400],
    ] as const) {
      const answer = await call('POST', path, body);
      expect(answer.status).toBe(status);
      expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: field })]));
    }
  });
});

describe('GET /admin/v1/stats', () => {
  it('counts every status and reports latency percentiles of delivered events', async () => {
    const account = await createAccount(configApi);
    const latencies = [120, 80, 1500, 300, 95, 4000, 250, 610, 130, 75, 900];
    const base = Date.now() - 3600_000;
    await seedEvents([
      ...latencies.map((latency, index) => ({
        accountId: account.id,
        status: 'delivered',
        createdAt: new Date(base + index * 1000),
        deliveredAt: new Date(base + index * 1000 + latency),
      })),
      { accountId: account.id, status: 'failed' },
      { accountId: account.id, status: 'failed' },
      { accountId: account.id, status: 'no_endpoint' },
      { accountId: account.id, status: 'retrying' },
      // Old events, outside `since` below.
      { accountId: account.id, status: 'filtered', createdAt: new Date(Date.UTC(2020, 0, 1)) },
      { accountId: account.id, status: 'delivered', createdAt: new Date(Date.UTC(2020, 0, 1)), deliveredAt: new Date(Date.UTC(2020, 0, 2)) },
    ]);

    const sorted = [...latencies].sort((a, b) => a - b);
    const answer = await call('GET', `/admin/v1/stats?account_id=${account.id}&since=${encodeURIComponent(new Date(base - 1000).toISOString())}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      account_id: account.id,
      since: new Date(base - 1000).toISOString(),
      total: 15,
      counts: { queued: 0, retrying: 1, delivered: 11, failed: 2, expired: 0, filtered: 0, no_endpoint: 1 },
      delivery_latency_ms: {
        count: 11,
        p50: Math.round(percentile(sorted, 0.5)),
        p95: Math.round(percentile(sorted, 0.95)),
        p99: Math.round(percentile(sorted, 0.99)),
      },
    });
    expect(answer.body.delivery_latency_ms.p50).toBe(250);

    const allTime = await call('GET', `/admin/v1/stats?account_id=${account.id}`);
    expect(allTime.body.total).toBe(17);
    expect(allTime.body.counts).toMatchObject({ filtered: 1, delivered: 12 });
    expect(allTime.body.delivery_latency_ms.count).toBe(12);
    expect(allTime.body.delivery_latency_ms.p99).toBeGreaterThan(4000);
  });

  it('answers zeros and null percentiles for an account without events, and covers every account without a filter', async () => {
    const account = await createAccount(configApi);
    const empty = await call('GET', `/admin/v1/stats?account_id=${account.id}`);
    expect(empty.body).toEqual({
      account_id: account.id,
      since: null,
      total: 0,
      counts: { queued: 0, retrying: 0, delivered: 0, failed: 0, expired: 0, filtered: 0, no_endpoint: 0 },
      delivery_latency_ms: { count: 0, p50: null, p95: null, p99: null },
    });
    const everything = await call('GET', '/admin/v1/stats');
    expect(everything.status).toBe(200);
    const { rows } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM events');
    expect(everything.body.total).toBe(rows[0].count);
    expect(Object.keys(everything.body.counts)).toEqual(['queued', 'retrying', 'delivered', 'failed', 'expired', 'filtered', 'no_endpoint']);
  });

  it('answers 404 for an unknown account and 400 for bad parameters', async () => {
    expect((await call('GET', '/admin/v1/stats?account_id=2000000000')).status).toBe(404);
    for (const [query, path] of [
      ['account_id=x', 'account_id'],
      ['since=later', 'since'],
      ['until=2024-01-01', 'until'],
    ]) {
      const answer = await call('GET', `/admin/v1/stats?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
  });
});

describe('redelivery while Redis is unreachable', () => {
  // A config-api that waited for Redis would never answer or finish its task at all.
  const offline = useAppOnHangingRedis(ConfigApiModule, ISOLATION);

  it('still restarts the rows and answers 202, leaving the enqueueing to the reconciler', async () => {
    const account = await createAccount(configApi);
    const [single, ...bulk] = await seedEvents([
      { accountId: account.id, status: 'failed' },
      { accountId: account.id, status: 'filtered' },
      { accountId: account.id, status: 'filtered' },
    ]);
    const one = await call('POST', `/admin/v1/events/${single.eventId}/redeliver`, undefined, ADMIN_HEADERS, offline);
    expect(one.status).toBe(202);
    expect(one.body).toEqual({ event_id: single.eventId, status: 'queued', series: 1 });
    const many = await call('POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'filtered' }, ADMIN_HEADERS, offline);
    expect(many.status).toBe(202);
    expect(many.body).toEqual({ count: 2, task_id: expect.any(String) });
    // The offline config-api could not add the task's job: a worker's poll (every TASK_POLL_MS) finds the row and runs it.
    await taskDone(many.body.task_id as string, offline, TASK_POLL_MS + 20_000);
    for (const event of [single, ...bulk]) expect(await eventRow(event.eventId)).toMatchObject({ status: 'queued', series: 1 });
  });
});
