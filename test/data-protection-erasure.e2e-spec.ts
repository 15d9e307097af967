import type { ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { EndpointAdmission } from '../apps/delivery-worker/src/delivery/admission/endpoint-admission';
import { adminCall, expectFieldError, type Json } from './support/admin-client';
import { type RunningApp, startApp } from './support/apps';
import { createAccount, setCallbackSettings } from './support/fixtures';
import { openApiCall } from './support/open-api-client';
import { portalCall, portalToken } from './support/portal-client';
import { useReceivers } from './support/receiver';
import { waitFor } from './support/wait-for';
import { attemptRows, deliveryQueueOf, eventRow, insertEvents, sendEvents, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('data-protection-erasure');
jest.setTimeout(60_000);

/** CONTRACT §12, erasure by subject: on the real config-api, worker, PostgreSQL, Redis and receivers. */
let configApi: RunningApp;
let worker: RunningApp;
const receiver = useReceivers();

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  // One call turn: a second job waits for it after loading its event, in the worker's hands.
  worker = await startApp(DeliveryWorkerModule, { WORKER_CONCURRENCY: '1', RECONCILE_INTERVAL: '1m' });
});

afterAll(async () => {
  await worker?.close();
  await configApi?.close();
});

async function erase(body: Json): Promise<Json> {
  const started = await adminCall(configApi, 'POST', '/admin/v1/erasures', body);
  expect(started.status).toBe(202);
  expect(started.body).toEqual({ id: expect.any(String), status: 'running' });
  return waitFor(`erasure ${started.body.id as string} to finish`, async () => {
    const progress = await adminCall(configApi, 'GET', `/admin/v1/erasures/${started.body.id as string}`);
    return progress.body.status === 'done' ? progress.body : undefined;
  });
}

describe('POST /admin/v1/erasures', () => {
  it('refuses a missing or malformed subject and account_id, naming the field, and an unknown account or erasure with 404', async () => {
    await expectFieldError(configApi, 'POST', '/admin/v1/erasures', 'subject', {});
    await expectFieldError(configApi, 'POST', '/admin/v1/erasures', 'subject', { subject: 'person:1' });
    await expectFieldError(configApi, 'POST', '/admin/v1/erasures', 'subject', { subject: 'customer:' });
    await expectFieldError(configApi, 'POST', '/admin/v1/erasures', 'subject', { subject: 42 });
    await expectFieldError(configApi, 'POST', '/admin/v1/erasures', 'account_id', { subject: 'customer:1', account_id: 'x' });
    expect((await adminCall(configApi, 'POST', '/admin/v1/erasures', { subject: 'customer:1', account_id: 2_000_000_000 })).status).toBe(404);
    expect((await adminCall(configApi, 'GET', '/admin/v1/erasures/8f6b3c1e-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await adminCall(configApi, 'GET', '/admin/v1/erasures/not-an-id')).status).toBe(404);
  });

  it("clears every stored event of the subject of that account, keeps the rest, and hides them from the portal, the feed and search", async () => {
    const target = await receiver();
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    const marker = `erase-me-${Date.now()}`;
    const [created, shut, unrelated] = await sendEvents(worker.app, account.id, [
      { action: 'Customer_create', message: { id: 9001, nick_name: marker, cellphones: [{ value: '13800000000' }] } },
      { action: 'ShutQueue_create', message: { customer_id: 9001, note: marker } },
      { action: 'Customer_create', message: { id: 9002, nick_name: marker } },
    ]);
    const [elsewhere] = await insertEvents(worker.app, other.id, [{ action: 'Customer_update', message: { id: 9001, nick_name: marker } }]);
    await waitFor('the three callbacks', () => target.requests.length === 3);
    await waitFor('their outcomes', async () => (await eventRow(worker.app, shut.eventId)).status === 'delivered' && (await eventRow(worker.app, created.eventId)).status === 'delivered');

    const progress = await erase({ subject: 'customer:9001', account_id: account.id });
    expect(progress.events_erased).toBe(2);

    for (const event of [created, shut]) {
      const detail = await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`);
      expect(detail.body).toMatchObject({ event_id: event.eventId, action: event.action, status: 'delivered', message: null, erased: true, attempt_count: 1 });
      expect(detail.body.created_at).toEqual(expect.any(String));
      expect(detail.body.delivered_at).toEqual(expect.any(String));
      const attempts = await attemptRows(worker.app, event.eventId);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ request_body: '', response_body: null, response_status: 200 });
    }
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${unrelated.eventId}`)).body).toMatchObject({ message: { id: 9002 }, erased: false });
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${elsewhere.eventId}`)).body).toMatchObject({ message: { id: 9001 }, erased: false });

    const listed = await adminCall(configApi, 'GET', `/admin/v1/events?account_id=${account.id}`);
    expect(Object.fromEntries((listed.body.items as Json[]).map((item) => [item.event_id, item.erased]))).toEqual({
      [created.eventId]: true,
      [shut.eventId]: true,
      [unrelated.eventId]: false,
    });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const found = await adminCall(configApi, 'GET', `/admin/v1/events?q=${marker}&since=${since}`);
    expect((found.body.items as Json[]).map((item) => item.event_id).sort()).toEqual([unrelated.eventId, elsewhere.eventId].sort());

    const token = await portalToken(configApi, account.id);
    const portal = await portalCall(configApi, `Bearer ${token}`, 'GET', `events/${created.eventId}`);
    expect(portal.body).toMatchObject({ message: null, erased: true });

    const feed = await waitFor('the feed to serve the kept event', async () => {
      const page = await openApiCall<{ items: Json[] }>(configApi.url, account, 'GET', 'events', { query: { limit: '100' } });
      return page.body.items.some((item) => item.event_id === unrelated.eventId) ? page : undefined;
    });
    expect(feed.body.items.map((item) => item.event_id)).toEqual([unrelated.eventId]);

    // A manual redelivery of an erased event sends nothing: the worker's last look finds it erased.
    expect((await adminCall(configApi, 'POST', `/admin/v1/events/${created.eventId}/redeliver`)).status).toBe(202);
    await waitFor('the redelivery to end', async () => {
      const row = await eventRow(worker.app, created.eventId);
      return row.series === 1 && row.status === 'failed' ? row : undefined;
    });
    expect(await eventRow(worker.app, created.eventId)).toMatchObject({ status: 'failed', last_error: 'erased' });
    expect(target.requests).toHaveLength(3);
  });

  it('erases every account when no account is given, and not events accepted after it', async () => {
    const first = await createAccount(configApi);
    const second = await createAccount(configApi);
    const [one] = await insertEvents(worker.app, first.id, [{ action: 'ImSubSession_create', message: { id: 'ss-42', visitor: 'a' } }]);
    const [two] = await insertEvents(worker.app, second.id, [{ action: 'ImSurveyVote_create', message: { sub_session_id: 'ss-42', score: 5 } }]);
    const progress = await erase({ subject: 'sub_session:ss-42' });
    expect(progress.events_erased).toBe(2);
    const [later] = await insertEvents(worker.app, first.id, [{ action: 'ImSubSession_update', message: { id: 'ss-42', visitor: 'b' } }]);
    for (const event of [one, two]) expect((await eventRow(worker.app, event.eventId)).status).toBe('failed');
    expect((await eventRow(worker.app, one.eventId)).last_error).toBe('erased');
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${later.eventId}`)).body).toMatchObject({ erased: false, message: { id: 'ss-42', visitor: 'b' } });
  });

  it('never sends a pending delivery whose job a worker already holds: the worker reads the row again before the call', async () => {
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const slow = (await receiver()).respondWith(async (_request, response: ServerResponse) => {
      await held;
      response.writeHead(200).end('ok');
    });
    const target = await receiver();
    const busy = await createAccount(configApi);
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, busy.id, { pushUrl: slow.url, contentType: 'JSON', permissions: 'all' });
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });

    // The first call takes the worker's only call and hangs at the receiver.
    const [first] = await sendEvents(worker.app, busy.id, [{ action: 'Customer_create', message: { id: 1 } }]);
    await waitFor('the first call to arrive', () => slow.requests.length === 1);
    // The second event's job is taken: its event is loaded (pending) and it waits for a call.
    const [pending] = await sendEvents(worker.app, account.id, [{ action: 'Customer_update', message: { id: 777, cellphone: '13900000000' } }]);
    const calls = worker.app.get(EndpointAdmission).calls as unknown as { waiting: unknown[] };
    await waitFor("the second job to wait for the worker's call", () => calls.waiting.length === 1);

    expect((await erase({ subject: 'customer:777', account_id: account.id })).events_erased).toBe(1);
    letGo();
    await waitFor('the first event to be delivered', async () => (await eventRow(worker.app, first.eventId)).status === 'delivered');
    const queue = deliveryQueueOf(worker.app).queueFor(account.id);
    await waitFor("the second job to end", async () => (await queue.getJob(deliveryJobId({ eventSeq: pending.seq, series: 0, attempt: 0 }))) === undefined);

    expect(target.requests).toHaveLength(0);
    expect(await eventRow(worker.app, pending.eventId)).toMatchObject({ status: 'failed', last_error: 'erased', attempts: 0 });
    expect(await attemptRows(worker.app, pending.eventId)).toEqual([]);
  });

  it('is resumed by another config-api process after its runner stopped', async () => {
    const account = await createAccount(configApi);
    const events = await insertEvents(
      worker.app,
      account.id,
      Array.from({ length: 450 }, (_, index) => ({ action: 'Organization_update', message: { id: 'org-5', n: index } })),
    );
    const dataSource = worker.app.get(DataSource);
    // A task whose process died before its first step: its heartbeat is long past.
    const [task] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO erasure_tasks (subject, account_id, upper_seq, lease_owner, heartbeat_at)
       VALUES ('organization:org-5', $1, $2, 'gone:1:dead', now() - interval '5 minutes') RETURNING id`,
      [account.id, events[events.length - 1].seq],
    );
    const restarted = await startApp(ConfigApiModule);
    try {
      const done = await waitFor('the resumed erasure to finish', async () => {
        const progress = await adminCall(restarted, 'GET', `/admin/v1/erasures/${task.id}`);
        return progress.body.status === 'done' ? progress.body : undefined;
      });
      expect(done).toEqual({ id: task.id, status: 'done', events_erased: 450 });
      const [left] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM events WHERE account_id = $1 AND NOT erased`, [account.id]);
      expect(left.count).toBe(0);
      // The log of erasures keeps no identifier once done.
      const [stored] = await dataSource.query<{ subject: string | null }[]>(`SELECT subject FROM erasure_tasks WHERE id = $1`, [task.id]);
      expect(stored.subject).toBeNull();
    } finally {
      await restarted.close();
    }
  });
});
