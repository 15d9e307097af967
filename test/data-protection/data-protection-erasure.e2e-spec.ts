import type { ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { EndpointAdmission } from '../../apps/delivery-worker/src/delivery/admission/endpoint-admission';
import { RECORD_MARGIN_MS } from '../../apps/delivery-worker/src/tasks/erasure-runner.service';
import { adminCall, expectFieldError, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { startTaskWorker } from '../support/task-worker';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { portalCall, portalToken } from '../support/portal-client';
import { useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { attemptRows, deliveryQueueOf, eventRow, insertEvents, sendEvents, setPrimaryStatus, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('data-protection-erasure');
jest.setTimeout(60_000);

/** CONTRACT §12, erasure by subject: on the real config-api, worker, PostgreSQL, Redis and receivers. */
let configApi: RunningApp;
let worker: RunningApp;
const receiver = useReceivers();

/**
 * The longest call a worker may have in flight: the worker that runs an erasure (the delivery worker,
 * never config-api) makes it done only that long (and a margin) after its first pass. Short, so the
 * suite's erasures end within seconds.
 */
const DELIVERY_TIMEOUT = { DELIVERY_TIMEOUT_MS: '3000' };
/** A push URL for accounts whose events the suite stores without a job: their deliveries stay pending. */
const UNCALLED = 'http://127.0.0.1:9/hook';

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  // One call turn: a second job waits for it after loading its event, in the worker's hands.
  worker = await startApp(DeliveryWorkerModule, { ...DELIVERY_TIMEOUT, WORKER_CONCURRENCY: '1', RECONCILE_INTERVAL: '1m' });
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
    // Pending deliveries (a push URL nothing calls here: the events get no job), which the erasure ends.
    for (const { id } of [first, second]) await setCallbackSettings(worker.app, id, { pushUrl: UNCALLED, permissions: 'all' });
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

    // The first call is let go once the erasure's first pass committed (well within the worker's call
    // time-out); the erasure is done only after that call could have ended.
    const started = await adminCall(configApi, 'POST', '/admin/v1/erasures', { subject: 'customer:777', account_id: account.id });
    expect(started.status).toBe(202);
    const db = worker.app.get(DataSource);
    await waitFor('the first pass to end', async () => {
      const [task] = await db.query<{ subject: string | null }[]>(`SELECT subject FROM erasure_tasks WHERE id = $1`, [started.body.id]);
      return task.subject === null;
    });
    letGo();
    const erased = await waitFor(`erasure ${started.body.id as string} to finish`, async () => {
      const progress = await adminCall(configApi, 'GET', `/admin/v1/erasures/${started.body.id as string}`);
      return progress.body.status === 'done' ? progress.body : undefined;
    });
    expect(erased.events_erased).toBe(1);
    await waitFor('the first event to be delivered', async () => (await eventRow(worker.app, first.eventId)).status === 'delivered');
    const queue = deliveryQueueOf(worker.app).queueFor(account.id);
    await waitFor("the second job to end", async () => (await queue.getJob(deliveryJobId({ eventSeq: pending.seq, series: 0, attempt: 0 }))) === undefined);

    expect(target.requests).toHaveLength(0);
    expect(await eventRow(worker.app, pending.eventId)).toMatchObject({ status: 'failed', last_error: 'erased', attempts: 0 });
    expect(await attemptRows(worker.app, pending.eventId)).toEqual([]);
  });

  it("ends every destination's pending delivery, and is done only after a second pass that clears what a call in flight recorded", async () => {
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: UNCALLED, permissions: 'all' });
    const db = worker.app.get(DataSource);
    const [event] = await insertEvents(worker.app, account.id, [{ action: 'Customer_update', message: { id: 4242, cellphone: '13700000000' } }]);
    await setPrimaryStatus(worker.app, [event.seq], 'delivered');
    // Another destination took it: one attempt failed there, the next waits while it is paused.
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, paused, signing_secret)
       VALUES ('held', $1, 'webhook', 'http://127.0.0.1:9/held', 'http://127.0.0.1:9/held', 'JSON', true, 'whsec_test')`,
      [account.id],
    );
    await db.query(`INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series_attempts) VALUES ($1, 'held', $2, 'retrying', 1, 1)`, [event.seq, account.id]);
    await db.query(`INSERT INTO open_deliveries (event_seq, destination_id, account_id, held) VALUES ($1, 'held', $2, 'paused')`, [event.seq, account.id]);
    const recordAttempt = (destinationId: string, attempt: number) =>
      db.query(
        `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status, response_body)
         VALUES ($1, $2, 0, $3, now(), 5, 'http://127.0.0.1:9/hook', '{}', 'json', 500, 'echo: 13700000000')`,
        [event.seq, destinationId, attempt],
      );
    await recordAttempt('held', 1);

    const started = await adminCall(configApi, 'POST', '/admin/v1/erasures', { subject: 'customer:4242', account_id: account.id });
    const taskId = started.body.id as string;
    const firstPass = await waitFor('the first pass to end', async () => {
      const [task] = await db.query<{ subject: string | null; status: string; finished_at: Date | null }[]>(`SELECT subject, status, finished_at FROM erasure_tasks WHERE id = $1`, [taskId]);
      return task.subject === null && task.status === 'running' ? task : undefined;
    });
    expect((await adminCall(configApi, 'GET', `/admin/v1/erasures/${taskId}`)).body).toEqual({ id: taskId, status: 'running', events_erased: 1 });
    expect(await db.query(`SELECT destination_id, status, last_error FROM deliveries WHERE event_seq = $1 ORDER BY destination_id`, [event.seq])).toEqual([
      { destination_id: 'held', status: 'failed', last_error: 'erased' },
      { destination_id: 'primary', status: 'delivered', last_error: null },
    ]);
    expect(await db.query(`SELECT 1 FROM open_deliveries WHERE event_seq = $1`, [event.seq])).toEqual([]);
    // A call that was on the wire records its attempt, response body and all, after the first pass.
    await recordAttempt('primary', 1);

    const done = await waitFor(`erasure ${taskId} to finish`, async () => {
      const progress = await adminCall(configApi, 'GET', `/admin/v1/erasures/${taskId}`);
      return progress.body.status === 'done' ? progress.body : undefined;
    });
    expect(done).toEqual({ id: taskId, status: 'done', events_erased: 1 });
    const [task] = await db.query<{ finished_at: Date }[]>(`SELECT finished_at FROM erasure_tasks WHERE id = $1`, [taskId]);
    expect(task.finished_at.getTime() - (firstPass.finished_at as Date).getTime()).toBeGreaterThanOrEqual(3000 + RECORD_MARGIN_MS);
    expect(worker.environment.delivery.timeoutMs).toBe(3000);
    const attempts = await attemptRows(worker.app, event.eventId);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(attempt).toMatchObject({ request_body: '', response_body: null, response_status: 500 });
    const view = (await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`)).body;
    expect(view).toMatchObject({ message: null, erased: true, status: 'delivered' });
    expect((view.deliveries as Json[]).map((delivery) => [delivery.destination_id, delivery.status, delivery.last_error])).toEqual([
      ['primary', 'delivered', null],
      ['held', 'failed', 'erased'],
    ]);
  });

  it('finishes a second pass whose runner stopped by walking the erased events of its scope', async () => {
    const account = await createAccount(configApi);
    const db = worker.app.get(DataSource);
    const [erased, untouched] = await insertEvents(worker.app, account.id, [
      { action: 'Customer_update', message: { id: 5151 } },
      { action: 'Customer_update', message: { id: 5152 } },
    ]);
    // The first pass erased the event; a call recorded afterwards left a body; then the runner died.
    await db.query(`UPDATE events SET message = 'null'::json, erased = true WHERE seq = $1`, [erased.seq]);
    for (const event of [erased, untouched]) {
      await db.query(
        `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status, response_body)
         VALUES ($1, 'primary', 0, 1, now(), 5, 'http://127.0.0.1:9/hook', '{}', 'body', 200, 'answer')`,
        [event.seq],
      );
    }
    const [task] = await db.query<{ id: string }[]>(
      `INSERT INTO erasure_tasks (subject, account_id, upper_seq, events_erased, lease_owner, heartbeat_at, finished_at)
       VALUES (NULL, $1, $2, 1, 'gone:1:dead', now() - interval '5 minutes', now() - interval '5 minutes') RETURNING id`,
      [account.id, untouched.seq],
    );
    const restarted = await startTaskWorker(DELIVERY_TIMEOUT);
    try {
      await waitFor('the resumed second pass to finish', async () => (await adminCall(configApi, 'GET', `/admin/v1/erasures/${task.id}`)).body.status === 'done', {
        timeoutMs: 30_000,
      });
    } finally {
      await restarted.close();
    }
    expect(await attemptRows(worker.app, erased.eventId)).toEqual([expect.objectContaining({ request_body: '', response_body: null })]);
    expect(await attemptRows(worker.app, untouched.eventId)).toEqual([expect.objectContaining({ request_body: 'body', response_body: 'answer' })]);
  });

  it('is resumed by another worker after its runner stopped', async () => {
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
    const restarted = await startTaskWorker(DELIVERY_TIMEOUT);
    try {
      const done = await waitFor('the resumed erasure to finish', async () => {
        const progress = await adminCall(configApi, 'GET', `/admin/v1/erasures/${task.id}`);
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
