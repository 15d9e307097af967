import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { TASK_STALE_AFTER_S } from '../../apps/delivery-worker/src/tasks/leased-task-runner';
import { type EventStatus, messageScalarsPredicate } from '@app/persistence/testing';
import { deliveryJobId } from '@app/runtime';
import { adminCall, expectFieldError, expectQueryError, type Json } from '../support/admin-client';
import { useApps } from '../support/apps';
import { startTaskWorker, TaskWorkerModule } from '../support/task-worker';
import { createAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { insertDeliveryRows, insertEventsWithPrimary, primaryDeliveriesOfAccount } from '../support/model-deliveries';
import { waitFor } from '@app/testing';

/**
 * Own database and queue, and a worker's task runners without its delivery pipeline (config-api only
 * records a task): redelivered events stay `queued` with their jobs waiting, so the suite can count
 * exactly what a task restarted.
 */
const namespace = new IsolatedNamespace('admin-search-redelivery');
const { configApi } = useApps({ configApi: ConfigApiModule, tasks: TaskWorkerModule }, { namespace });

let seeded = 0;

/** Events straight into the tables (their keys, the events, their primary deliveries): the suite controls statuses, messages and times. */
async function seed(accountId: number, count: number, fields: { status?: EventStatus; message?: (index: number) => unknown; createdAt?: string; action?: string } = {}) {
  seeded += count;
  const batch = seeded;
  return insertEventsWithPrimary(
    namespace.db,
    accountId,
    Array.from({ length: count }, (_, index) => ({
      eventId: `evt-${batch}-${index + 1}`,
      action: fields.action ?? 'Customer_create',
      message: fields.message ? fields.message(index) : { id: index },
      createdAt: fields.createdAt,
    })),
    { status: fields.status ?? 'failed', attempts: 1 },
  );
}

/** How many of the account's events (by their primary delivery) are in each status, by action when asked. */
async function primaryCounts(accountId: number, byAction = false): Promise<Array<{ status: string; action?: string; n: number }>> {
  const counts = new Map<string, { status: string; action?: string; n: number }>();
  for (const row of await primaryDeliveriesOfAccount(namespace.db, accountId)) {
    const key = byAction ? `${row.status} ${row.action}` : row.status;
    const count = counts.get(key) ?? (byAction ? { status: row.status, action: row.action, n: 0 } : { status: row.status, n: 0 });
    count.n += 1;
    counts.set(key, count);
  }
  return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, count]) => count);
}

describe('q: search inside messages', () => {
  it('finds a value held anywhere in the message, as a string or a number, within a time range', async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const [asNumber] = await seed(account.id, 1, { message: () => ({ customer_id: 12345, nick_name: 'x' }) });
    const [asString] = await seed(account.id, 1, { message: () => ({ id: '12345' }) });
    const [nested] = await seed(other.id, 1, { message: () => ({ im: { visitor: { sub_session_id: 'ss-777' }, tags: ['12345'] } }) });
    await seed(account.id, 30, { message: (index) => ({ id: 100000 + index, note: 'x12345 is only a part', n: 123456 }) });
    await seed(account.id, 1, { message: () => ({ id: 12345 }), createdAt: '2020-01-01T00:00:00Z' });

    const found = await adminCall(configApi, 'GET', `/admin/v1/events?q=12345&since=${since}`);
    expect(found.status).toBe(200);
    expect((found.body.items as Json[]).map((item) => item.event_id)).toEqual([nested.event_id, asString.event_id, asNumber.event_id]);

    const combined = await adminCall(configApi, 'GET', `/admin/v1/events?q=12345&since=${since}&account_id=${account.id}&limit=1`);
    expect((combined.body.items as Json[]).map((item) => item.event_id)).toEqual([asString.event_id]);
    const next = await adminCall(configApi, 'GET', `/admin/v1/events?q=12345&since=${since}&account_id=${account.id}&cursor=${combined.body.next_cursor as string}`);
    expect((next.body.items as Json[]).map((item) => item.event_id)).toEqual([asNumber.event_id]);

    const deep = await adminCall(configApi, 'GET', `/admin/v1/events?q=ss-777&since=${since}`);
    expect((deep.body.items as Json[]).map((item) => item.event_id)).toEqual([nested.event_id]);
    const quoted = await adminCall(configApi, 'GET', `/admin/v1/events?q=${encodeURIComponent('say "hi" \\ there')}&since=${since}`);
    expect(quoted.status).toBe(200);
    expect(quoted.body.items).toEqual([]);
    // The old event with the same value is outside the range.
    const old = await adminCall(configApi, 'GET', '/admin/v1/events?q=12345&since=2019-12-31T00:00:00Z&until=2020-01-02T00:00:00Z');
    expect(old.body.items).toHaveLength(1);
  });

  it('meets a number however it is spelled, as the path compares numbers', async () => {
    const account = await createAccount(configApi);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const [price] = await seed(account.id, 1, { message: () => ({ order: { price: 1.5, tags: [true, null] } }) });
    const [thousand] = await seed(account.id, 1, { message: () => ({ count: 1000 }) });
    const [spelled] = await seed(account.id, 1, { message: () => ({ price: '1.50' }) });
    const search = async (q: string): Promise<unknown[]> =>
      ((await adminCall(configApi, 'GET', `/admin/v1/events?q=${encodeURIComponent(q)}&since=${since}&account_id=${account.id}`)).body.items as Json[]).map(
        (item) => item.event_id,
      );
    expect(await search('1.50')).toEqual([spelled.event_id, price.event_id]);
    expect(await search('1.5')).toEqual([price.event_id]);
    expect(await search('1e3')).toEqual([thousand.event_id]);
    expect(await search('1000.0')).toEqual([thousand.event_id]);
    expect(await search('true')).toEqual([]);
  });

  it('is served by the message index', async () => {
    await namespace.db.query('SET enable_seqscan = off');
    const { rows } = await namespace.db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT seq FROM events WHERE message_scalars(message) @@ $1::jsonpath`,
      [messageScalarsPredicate('12345')],
    );
    // (An index scan on the table or on each of its partitions, whatever their names; the planner shows the function inlined.)
    expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Cond: \(jsonb_path_query_array\(\(message\)::jsonb, .* @@ '\(\$\[\*\] == "12345" \|\| \$\[\*\] == 12345\)'::jsonpath\)/);
  });

  it('needs since and a range of at most 31 days', async () => {
    await expectQueryError(configApi, 'GET', '/admin/v1/events?q=12345', 'since');
    await expectQueryError(configApi, 'GET', '/admin/v1/events?q=12345&since=2024-01-01T00:00:00Z&until=2024-02-02T00:00:01Z', 'since');
    await expectQueryError(configApi, 'GET', `/admin/v1/events?q=&since=${new Date().toISOString()}`, 'q');
    await expectQueryError(configApi, 'GET', `/admin/v1/events?q=${'a'.repeat(257)}&since=2024-01-01`, 'q');
    await expectQueryError(configApi, 'GET', '/admin/v1/events?q=a%01b&since=2024-01-01', 'q');
  });
});

describe('bulk redelivery tasks', () => {
  async function untilDone(taskId: string): Promise<{ final: Json; seen: Json[] }> {
    const seen: Json[] = [];
    const final = await waitFor(`task ${taskId} to finish`, async () => {
      const answer = await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${taskId}`);
      expect(answer.status).toBe(200);
      seen.push(answer.body);
      return answer.body.status !== 'running' ? answer.body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 20 });
    return { final, seen };
  }

  it('redelivers everything a filter matches in chunks, with progress readable until done', async () => {
    const account = await createAccount(configApi);
    const failed = await seed(account.id, 2500, { status: 'failed', action: 'Customer_update' });
    await seed(account.id, 5, { status: 'failed', action: 'Customer_create' });
    await seed(account.id, 3, { status: 'delivered', action: 'Customer_update' });

    const answer = await adminCall(configApi, 'POST', '/admin/v1/events/redeliver', { account_id: account.id, action: 'Customer_update' });
    expect(answer).toMatchObject({ status: 202 });
    expect(answer.body).toEqual({ count: 2500, task_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const { final, seen } = await untilDone(answer.body.task_id as string);
    expect(final).toMatchObject({
      id: answer.body.task_id,
      status: 'done',
      total: 2500,
      done: 2500,
      account_id: account.id,
      filter: { account_id: account.id, action: 'Customer_update', status: 'failed' },
      error: null,
    });
    expect(Date.parse(final.finished_at as string)).toBeGreaterThanOrEqual(Date.parse(final.created_at as string));
    const progress = seen.map((read) => read.done as number);
    expect(progress.every((done, index) => index === 0 || done >= progress[index - 1])).toBe(true);

    expect(await primaryCounts(account.id, true)).toEqual([
      { status: 'delivered', action: 'Customer_update', n: 3 },
      { status: 'failed', action: 'Customer_create', n: 5 },
      { status: 'queued', action: 'Customer_update', n: 2500 },
    ]);
    for (const event of [failed[0], failed[1249], failed[2499]]) {
      expect(await namespace.getJob(deliveryJobId({ eventSeq: event.seq, series: 1, attempt: 0 }))).toBeDefined();
    }

    const list = await adminCall(configApi, 'GET', '/admin/v1/redeliveries?limit=5');
    expect((list.body.items as Json[])[0]).toEqual(final);
  });

  it('restarts the failed deliveries to the other destinations as well, across chunks, and never a deleted destination\'s', async () => {
    const account = await createAccount(configApi);
    const addDestination = async (path: string): Promise<string> =>
      (await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/destinations`, { type: 'webhook', target: `https://hooks.example.com/${path}` })).body.id as string;
    const [first, second, deleted] = [await addDestination('a'), await addDestination('b'), await addDestination('c')];
    const deliveredPrimary = await seed(account.id, 1100, { status: 'delivered', action: 'Customer_update' });
    const failedPrimary = await seed(account.id, 5, { status: 'failed', action: 'Customer_update' });
    const [otherAction] = await seed(account.id, 1, { status: 'delivered', action: 'Customer_create' });
    const deliveries = (events: Array<{ seq: string }>, destination: string, status: EventStatus) =>
      insertDeliveryRows(
        namespace.db,
        events.map((event) => ({ seq: event.seq, destinationId: destination, accountId: account.id, status, attempts: 1, seriesAttempts: 1 })),
      );
    await deliveries(deliveredPrimary, first, 'failed');
    // Every event with two failed deliveries sits at the newest end, so a chunk boundary falls between an event's two.
    await deliveries(deliveredPrimary.slice(-50), second, 'failed');
    await deliveries(deliveredPrimary.slice(0, -50), second, 'delivered');
    await deliveries(deliveredPrimary.slice(0, 10), deleted, 'failed');
    await deliveries([otherAction], first, 'failed');
    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/${deleted}`)).status).toBe(204);

    const answer = await adminCall(configApi, 'POST', '/admin/v1/events/redeliver', { account_id: account.id, action: 'Customer_update' });
    expect(answer.body.count).toBe(5 + 1100 + 50);
    const { final } = await untilDone(answer.body.task_id as string);
    expect(final).toMatchObject({ status: 'done', total: 1155, done: 1155, error: null });

    const { rows } = await namespace.db.query<{ destination_id: string; status: string; series: number; n: number }>(
      `SELECT destination_id, status, series, count(*)::int AS n FROM deliveries WHERE account_id = $1 AND destination_id <> 'primary' GROUP BY 1, 2, 3`,
      [account.id],
    );
    const byDestination = (id: string) => rows.filter((row) => row.destination_id === id).map(({ status, series, n }) => ({ status, series, n })).sort((a, b) => a.status.localeCompare(b.status));
    expect(byDestination(first)).toEqual([
      { status: 'failed', series: 0, n: 1 },
      { status: 'queued', series: 1, n: 1100 },
    ]);
    expect(byDestination(second)).toEqual([
      { status: 'delivered', series: 0, n: 1050 },
      { status: 'queued', series: 1, n: 50 },
    ]);
    expect(byDestination(deleted)).toEqual([{ status: 'failed', series: 0, n: 10 }]);
    for (const event of [deliveredPrimary[0], deliveredPrimary[1099]]) {
      expect((await namespace.getJob(`e${event.seq}-d${first}-s1-a0`))?.data).toEqual({ eventSeq: event.seq, accountId: account.id, series: 1, attempt: 0, destinationId: first });
    }
    expect(await namespace.getJob(`e${deliveredPrimary[1099].seq}-d${second}-s1-a0`)).toBeDefined();
    expect(await namespace.getJob(deliveryJobId({ eventSeq: failedPrimary[0].seq, series: 1, attempt: 0 }))).toBeDefined();
    // The delivered primaries were not part of it.
    expect(await primaryCounts(account.id)).toEqual([
      { status: 'delivered', n: 1101 },
      { status: 'queued', n: 5 },
    ]);
  });

  it('keeps the account call answering {count} and adds task_id', async () => {
    const account = await createAccount(configApi);
    await seed(account.id, 4, { status: 'no_endpoint' });
    const answer = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'no_endpoint' });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ count: 4, task_id: expect.any(String) });
    const { final } = await untilDone(answer.body.task_id as string);
    expect(final).toMatchObject({ status: 'done', total: 4, done: 4, account_id: account.id });
    const none = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed' });
    expect(none.body.count).toBe(0);
    expect((await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${none.body.task_id as string}`)).body).toMatchObject({ status: 'done', total: 0, done: 0 });
  });

  it('is resumed by another worker when its runner died', async () => {
    const account = await createAccount(configApi);
    const events = await seed(account.id, 1200, { status: 'failed' });
    // A task a dead process had started: its heartbeat stopped and it got through the newest 200 events.
    const sorted = events.map((event) => BigInt(event.seq)).sort((a, b) => (a < b ? -1 : 1));
    const below = sorted[sorted.length - 200];
    await namespace.db.query(
      `UPDATE deliveries SET status = 'queued', series = 1, series_attempts = 0, next_attempt_at = now() WHERE account_id = $1 AND destination_id = 'primary' AND event_seq >= $2`,
      [account.id, below.toString()],
    );
    const { rows } = await namespace.db.query<{ id: string }>(
      `INSERT INTO redelivery_tasks (status, account_id, filter, total, done, below_seq, upper_seq, lease_owner, heartbeat_at)
       VALUES ('running', $1, $2::jsonb, 1200, 200, $3, $4, 'dead-host:1:x', now() - $5 * interval '1 second')
       RETURNING id`,
      [account.id, JSON.stringify({ account_id: account.id, status: 'failed' }), below.toString(), sorted[sorted.length - 1].toString(), TASK_STALE_AFTER_S + 5],
    );
    const second = await startTaskWorker(namespace.overrides);
    try {
      const final = await waitFor('the abandoned task to be finished', async () => {
        const answer = await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${rows[0].id}`);
        return answer.body.status === 'done' ? answer.body : undefined;
      });
      expect(final).toMatchObject({ total: 1200, done: 1200, error: null });
      expect(await primaryCounts(account.id)).toEqual([{ status: 'queued', n: 1200 }]);
    } finally {
      await second.close();
    }
  });

  it('ends a task that cannot run as failed, with the reason', async () => {
    // A stored filter no runner can apply (q without a range), left by a dead process.
    const { rows } = await namespace.db.query<{ id: string }>(
      `INSERT INTO redelivery_tasks (status, account_id, filter, total, upper_seq, lease_owner, heartbeat_at)
       VALUES ('running', NULL, '{"q": "x", "status": "failed"}', 1, 1, 'dead-host:2:y', now() - interval '1 hour')
       RETURNING id`,
    );
    const second = await startTaskWorker(namespace.overrides);
    try {
      const final = await waitFor('the task to fail', async () => {
        const answer = await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${rows[0].id}`);
        return answer.body.status === 'failed' ? answer.body : undefined;
      });
      expect(final).toMatchObject({ done: 0, error: expect.stringContaining('since'), finished_at: expect.any(String) });
    } finally {
      await second.close();
    }
  });

  it('refuses bad filters with 422 naming the field, and unknown tasks with 404', async () => {
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'status', {});
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'status', { status: 'queued' });
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'since', { q: '12345' });
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'account_id', { account_id: 'one' });
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'action', { action: 'Nope' });
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'until', { since: '2024-01-02', until: '2024-01-01' });
    await expectFieldError(configApi, 'POST', '/admin/v1/events/redeliver', 'color', { status: 'failed', color: 'red' });
    await expectQueryError(configApi, 'GET', '/admin/v1/redeliveries?limit=0', 'limit');
    expect((await adminCall(configApi, 'GET', '/admin/v1/redeliveries/not-a-task')).status).toBe(404);
    expect((await adminCall(configApi, 'GET', '/admin/v1/redeliveries/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await adminCall(configApi, 'POST', '/admin/v1/events/redeliver', { account_id: 2000000000 })).status).toBe(404);
  });
});
