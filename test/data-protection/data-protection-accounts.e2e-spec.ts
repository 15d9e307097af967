import { DataSource } from 'typeorm';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall, expectFieldError, expectQueryError, type Json } from '../support/admin-client';
import { type RunningApp, useApps } from '../support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { adminPortalLink, openPortalSession, portalCall, portalToken } from '../support/portal-client';
import { useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { attemptRows, deliveryQueueOf, enqueueFirstAttempts, eventRow, insertEvents, sendEvents, setPrimaryStatus, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('data-protection-accounts');
jest.setTimeout(60_000);

/** CONTRACT §12 on accounts: redaction at rest and offboarding, on the real apps, PostgreSQL, Redis and receivers. */
const { configApi, otherConfigApi, ingest, worker } = useApps({
  configApi: ConfigApiModule,
  // A second config-api process: what one of them does, the other refuses at once.
  otherConfigApi: ConfigApiModule,
  ingest: IngestModule,
  worker: [DeliveryWorkerModule, { RECONCILE_INTERVAL: '1m' }],
});
const receiver = useReceivers();

function post(app: RunningApp, path: string, body: unknown): Promise<Response> {
  return fetch(`${app.url}${path}`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
}

describe('PUT /admin/v1/accounts/:id/redaction', () => {
  it('refuses a malformed body naming fields, a bad id and an unknown account', async () => {
    const account = await createAccount(configApi);
    await expectFieldError(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, 'fields', {});
    await expectFieldError(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, 'fields', { fields: 'cellphone' });
    await expectFieldError(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, 'fields', { fields: ['has space'] });
    await expectFieldError(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, 'fields', { fields: [7] });
    await expectQueryError(configApi, 'PUT', '/admin/v1/accounts/abc/redaction', 'id', { fields: [] });
    expect((await adminCall(configApi, 'PUT', '/admin/v1/accounts/2000000000/redaction', { fields: [] })).status).toBe(404);
  });

  it('delivers the fields, then keeps "[redacted]" in the ended event and its attempt, and search no longer finds the old value', async () => {
    const target = await receiver();
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    const set = await adminCall(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, { fields: ['cellphone', 'email', 'cellphone'] });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: account.id, redaction_fields: ['cellphone', 'email'] });
    expect((await adminCall(configApi, 'GET', `/admin/v1/accounts/${account.id}`)).body.redaction_fields).toEqual(['cellphone', 'email']);

    const phone = `139${Date.now() % 100_000_000}`;
    const message = { id: 31, nick_name: 'kept', cellphone: phone, contacts: [{ email: 'someone@example.com', cellphone: phone }] };
    const [event] = await sendEvents(worker.app, account.id, [{ action: 'Customer_update', message }]);
    await waitFor('the callback', () => target.requests.length === 1);
    // Callbacks still carry the fields.
    expect(JSON.parse(target.requests[0].body)).toEqual({ action: 'Customer_update', message });

    const redacted = { id: 31, nick_name: 'kept', cellphone: '[redacted]', contacts: [{ email: '[redacted]', cellphone: '[redacted]' }] };
    const detail = await waitFor('the stored message to be redacted', async () => {
      const answer = await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`);
      return answer.body.message?.cellphone === '[redacted]' ? answer.body : undefined;
    });
    expect(detail).toMatchObject({ status: 'delivered', message: redacted, erased: false });
    expect(Object.keys(detail.message as object)).toEqual(['id', 'nick_name', 'cellphone', 'contacts']);
    const [attempt] = await attemptRows(worker.app, event.eventId);
    expect(JSON.parse(attempt.request_body)).toEqual({ action: 'Customer_update', message: redacted });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    expect((await adminCall(configApi, 'GET', `/admin/v1/events?q=${phone}&since=${since}`)).body.items).toEqual([]);
    expect((await adminCall(configApi, 'GET', `/admin/v1/events?q=kept&since=${since}&account_id=${account.id}`)).body.items).toHaveLength(1);

    // A manual redelivery sends the stored copy: the values are no longer anywhere in the service.
    expect((await adminCall(configApi, 'POST', `/admin/v1/events/${event.eventId}/redeliver`)).status).toBe(202);
    await waitFor('the redelivered callback', () => target.requests.length === 2);
    expect(JSON.parse(target.requests[1].body)).toEqual({ action: 'Customer_update', message: redacted });
  });

  it('leaves a pending event whole until it ends, and redacts events that ended before the fields were set', async () => {
    const account = await createAccount(configApi);
    // A push URL nothing calls (the events get no job): the second event stays pending until the test ends it.
    await setCallbackSettings(worker.app, account.id, { pushUrl: 'http://127.0.0.1:9/hook', permissions: 'all' });
    const [old] = await insertEvents(worker.app, account.id, [{ action: 'Customer_create', message: { id: 1, cellphone: '111' } }]);
    const [pending] = await insertEvents(worker.app, account.id, [{ action: 'Customer_create', message: { id: 2, cellphone: '222' } }]);
    const db = worker.app.get(DataSource);
    await setPrimaryStatus(worker.app, [old.seq], 'failed');
    await adminCall(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, { fields: ['cellphone'] });
    await waitFor('the event that had ended to be redacted', async () => (await adminCall(configApi, 'GET', `/admin/v1/events/${old.eventId}`)).body.message?.cellphone === '[redacted]');
    // The mark stops before the pending event, which stays whole.
    const [mark] = await db.query<{ through: string }[]>(`SELECT redacted_through_seq::text AS through FROM callback_settings WHERE account_id = $1`, [account.id]);
    expect(mark.through).toBe(old.seq);
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${pending.eventId}`)).body.message).toEqual({ id: 2, cellphone: '222' });
    await setPrimaryStatus(worker.app, [pending.seq], 'no_endpoint');
    await waitFor('the event to be redacted once ended', async () => (await adminCall(configApi, 'GET', `/admin/v1/events/${pending.eventId}`)).body.message?.cellphone === '[redacted]');
  });

  it("waits for every destination's delivery to end, not only the primary's", async () => {
    const account = await createAccount(configApi);
    const db = worker.app.get(DataSource);
    const [old, event] = await insertEvents(worker.app, account.id, [
      { action: 'Customer_create', message: { id: 1, cellphone: '111' } },
      { action: 'Customer_create', message: { id: 2, cellphone: '222' } },
    ]);
    await setPrimaryStatus(worker.app, [old.seq, event.seq], 'delivered');
    // The event's delivery to another destination still waits (held by a pause).
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, paused, signing_secret)
       VALUES ('held', $1, 'webhook', 'http://127.0.0.1:9/held', 'http://127.0.0.1:9/held', 'JSON', true, 'whsec_test')`,
      [account.id],
    );
    await db.query(`INSERT INTO deliveries (event_seq, destination_id, account_id, status) VALUES ($1, 'held', $2, 'queued')`, [event.seq, account.id]);
    await db.query(`INSERT INTO open_deliveries (event_seq, destination_id, account_id, held) VALUES ($1, 'held', $2, 'paused')`, [event.seq, account.id]);
    await adminCall(configApi, 'PUT', `/admin/v1/accounts/${account.id}/redaction`, { fields: ['cellphone'] });
    await waitFor('the event that had ended everywhere to be redacted', async () => (await adminCall(configApi, 'GET', `/admin/v1/events/${old.eventId}`)).body.message?.cellphone === '[redacted]');
    const [mark] = await db.query<{ through: string }[]>(`SELECT redacted_through_seq::text AS through FROM callback_settings WHERE account_id = $1`, [account.id]);
    expect(mark.through).toBe(old.seq);
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`)).body).toMatchObject({ status: 'delivered', message: { id: 2, cellphone: '222' } });
    await db.query(`UPDATE deliveries SET status = 'expired', last_error = 'expired after 1h' WHERE event_seq = $1 AND destination_id = 'held'`, [event.seq]);
    await db.query(`DELETE FROM open_deliveries WHERE event_seq = $1`, [event.seq]);
    await waitFor('the event to be redacted once every delivery ended', async () => (await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`)).body.message?.cellphone === '[redacted]');
  });
});

describe('DELETE /admin/v1/accounts/:id', () => {
  it('stops the token, portal sessions and links, bot webhooks and ingest at once, then deletes the rows and frees the email', async () => {
    const account = await createAccount(configApi);
    const botTarget = (await receiver()).respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answerContent: 'yes' }));
    });
    const bot = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/bot-webhooks`, {
      method: 'POST',
      headers: ADMIN_HEADERS,
      body: JSON.stringify({ name: 'faq', type: 'message_trigger', url: botTarget.url, key: 'k' }),
    });
    expect(bot.status).toBe(201);
    const botCall = { account_id: account.id, integration_name: 'faq', regex: 'r', questionContent: 'q' };
    // Ingest has looked the webhook up (and cached the lookup) before the deletion.
    expect((await post(ingest, '/v1/bot/message-trigger', botCall)).status).toBe(200);
    // The worker has the account's settings in its cache: it delivered an event just before.
    const callbacks = await receiver();
    await setCallbackSettings(worker.app, account.id, { pushUrl: callbacks.url, contentType: 'JSON', permissions: 'all' });
    await sendEvents(worker.app, account.id, [{ action: 'Customer_create', message: { id: 1 } }]);
    await waitFor('the callback before the deletion', () => callbacks.requests.length === 1);
    const token = await portalToken(configApi, account.id);
    const { code } = await adminPortalLink(configApi, account.id);
    expect((await openApiCall(configApi.url, account, 'GET', 'push_settings')).body.code).toBe(1000);
    const events = await insertEvents(
      worker.app,
      account.id,
      Array.from({ length: 2100 }, (_, index) => ({ action: 'Customer_update', message: { id: index } })),
    );
    // Settled already: the worker is not asked about these.
    await setPrimaryStatus(worker.app, events.map((stored) => stored.seq), 'delivered');
    const db = worker.app.get(DataSource);
    // An event whose next step comes after the deletion started: stored now (the account row still exists;
    // the background deletion may be over before this test's next line on a loaded machine), its retry far
    // off so nothing sends it before its job is added below.
    const [late] = await insertEvents(worker.app, account.id, [{ action: 'Customer_create', message: { id: 2 } }]);
    await setPrimaryStatus(worker.app, [late.seq], 'retrying');
    await db.query(`UPDATE deliveries SET next_attempt_at = now() + interval '1 hour' WHERE event_seq = $1 AND destination_id = 'primary'`, [late.seq]);
    await db.query(`INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at) VALUES ($1, 'primary', $2, now() + interval '1 hour')`, [late.seq, account.id]);
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, request_body)
       SELECT seq, 'primary', 0, 1, now(), 5, 'http://127.0.0.1:9/hook', '{}', message::text FROM events WHERE account_id = $1`,
      [account.id],
    );

    const deleted = await adminCall(otherConfigApi, 'DELETE', `/admin/v1/accounts/${account.id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ id: account.id, status: 'deleting' });

    expect((await openApiCall(configApi.url, account, 'GET', 'push_settings')).body.code).toBe(2059);
    expect((await portalCall(configApi, `Bearer ${token}`, 'GET', 'events')).status).toBe(401);
    expect((await openPortalSession(configApi, code)).status).toBe(401);
    expect((await post(ingest, '/v1/bot/message-trigger', botCall)).status).toBe(404);
    expect(botTarget.requests).toHaveLength(1);
    const event = await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_create', message: { id: 1 } });
    expect(event.status).toBe(404);
    expect((await adminCall(configApi, 'GET', `/admin/v1/accounts/${account.id}`)).status).toBe(404);
    expect((await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/rotate-token`)).status).toBe(404);
    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${account.id}`)).status).toBe(404);
    // A job of the account that runs now makes no call (the row is there and the account deleting, or the row is gone).
    await enqueueFirstAttempts(deliveryQueueOf(worker.app), [late]);
    const queue = deliveryQueueOf(worker.app).queueFor(account.id);
    await waitFor('the late job to end', async () => (await queue.getJob(deliveryJobId({ eventSeq: late.seq, series: 0, attempt: 0 }))) === undefined);
    expect(callbacks.requests).toHaveLength(1);

    const reused = await waitFor('the email to be free again', async () => {
      const answer = await adminCall(configApi, 'POST', '/admin/v1/accounts', { email: account.email });
      return answer.status === 201 ? answer.body : undefined;
    });
    expect(reused.id).not.toBe(account.id);
    const [left] = await db.query<{ events: number; attempts: number; keys: number }[]>(
      `SELECT (SELECT count(*)::int FROM events WHERE account_id = $1) AS events,
              (SELECT count(*)::int FROM delivery_attempts WHERE event_seq = ANY($2::bigint[])) AS attempts,
              (SELECT count(*)::int FROM event_keys WHERE account_id = $1) AS keys`,
      [account.id, events.map((stored) => stored.seq)],
    );
    expect(left).toEqual({ events: 0, attempts: 0, keys: 0 });
    const [deletion] = await db.query<Json[]>(`SELECT status, events_deleted FROM account_deletions WHERE id = $1`, [account.id]);
    expect(deletion).toEqual({ status: 'done', events_deleted: '2102' });
    expect(await eventRow(worker.app, events[0].eventId)).toBeUndefined();
  });

  it('answers 404 for an unknown account and 400 naming a malformed id', async () => {
    expect((await adminCall(configApi, 'DELETE', '/admin/v1/accounts/2000000000')).status).toBe(404);
    await expectQueryError(configApi, 'DELETE', '/admin/v1/accounts/x', 'id');
  });
});
