import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall, type Json } from '../support/admin-client';
import { useApps } from '../support/apps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { insertDeliveryRows, insertEventRows, primaryDeliveryOf } from '../support/model-deliveries';
import { portalCall, portalToken } from '../support/portal-client';

/*
 * Destinations through the portal and the admin API (CONTRACT §10, §11, §3), and the admin event view's
 * `deliveries` with redelivery to one destination or to all. The delivery rows and attempts here are
 * written straight to the tables (what ingest and the worker would have written), so the suite checks
 * the views and the restarts exactly; its own database and Redis prefix keep a worker of another suite
 * away from its rows and jobs.
 */
const namespace = new IsolatedNamespace('destinations-doors');

const { api } = useApps({ api: ConfigApiModule }, { namespace });

const WEBHOOK = 'https://hooks.example.com/in';
const MQTT = 'mqtts://sensor:mqtt-pass-4411@broker.example.com:8883/udesk/events';

describe('portal destinations', () => {
  it('lists, adds, changes, pauses, resumes and deletes for the session account only', async () => {
    const [account, other] = await Promise.all([createAccount(api), createAccount(api)]);
    const auth = `Bearer ${await portalToken(api, account.id)}`;
    const otherAuth = `Bearer ${await portalToken(api, other.id)}`;

    expect((await portalCall(api, auth, 'GET', 'destinations')).body).toEqual({ items: [expect.objectContaining({ id: 'primary', type: 'webhook' })] });
    const created = await portalCall(api, auth, 'POST', 'destinations', { type: 'mqtt', target: MQTT, actions: ['ImSubSession_create'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'mqtt', target: 'mqtts://sensor:***@broker.example.com:8883/udesk/events', signing_secret: expect.stringMatching(/^whsec_/) });
    const id = created.body.id as string;

    const listed = await portalCall(api, auth, 'GET', 'destinations');
    expect(listed.body.items.map((item: Json) => item.id)).toEqual(['primary', id]);
    expect(JSON.stringify(listed.body)).not.toContain('mqtt-pass-4411');

    expect((await portalCall(api, auth, 'PUT', `destinations/${id}`, { format: 'cloudevents' })).body).toMatchObject({ id, format: 'cloudevents' });
    expect((await portalCall(api, auth, 'POST', `destinations/${id}/pause`)).body).toMatchObject({ id, paused: true });
    expect((await portalCall(api, auth, 'POST', `destinations/${id}/resume`)).body).toMatchObject({ id, paused: false });
    expect((await portalCall(api, auth, 'POST', 'destinations/primary/pause')).body).toMatchObject({ id: 'primary', paused: true });

    for (const [method, path] of [
      ['PUT', `destinations/${id}`],
      ['POST', `destinations/${id}/pause`],
      ['DELETE', `destinations/${id}`],
    ]) {
      const answer = await portalCall(api, otherAuth, method, path, method === 'PUT' ? { format: 'udesk' } : undefined);
      expect({ method, status: answer.status, error: answer.body.error }).toEqual({ method, status: 404, error: 'not_found' });
    }
    expect((await portalCall(api, otherAuth, 'GET', 'destinations')).body.items.map((item: Json) => item.id)).toEqual(['primary']);

    expect((await portalCall(api, auth, 'DELETE', `destinations/${id}`)).status).toBe(204);
    expect((await portalCall(api, auth, 'GET', 'destinations')).body.items.map((item: Json) => item.id)).toEqual(['primary']);
    expect((await portalCall(api, null, 'GET', 'destinations')).status).toBe(401);
  });

  it('answers a wrong field with 400, the Open API text and a detail naming it', async () => {
    const account = await createAccount(api);
    const auth = `Bearer ${await portalToken(api, account.id)}`;
    const answer = await portalCall(api, auth, 'POST', 'destinations', { type: 'webhook', target: WEBHOOK, filter: { $where: '1' }, auth: { type: 'header', name: 'webhook-id', value: 'x' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_param',
      message: expect.stringContaining('code 2000: filter: operator $where is not allowed'),
      details: [
        { path: 'filter', problem: 'operator $where is not allowed' },
        { path: 'auth.name', problem: expect.stringContaining('webhook-*') },
      ],
    });
  });
});

describe('admin destinations', () => {
  it('serves the same routes for any account, and the account view lists them without credentials', async () => {
    const account = await createAccount(api);
    const created = await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations`, { type: 'mqtt', target: MQTT });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body.signing_secret).toMatch(/^whsec_/);

    const view = await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}`);
    expect(view.body.destinations.map((item: Json) => item.id)).toEqual(['primary', id]);
    expect(JSON.stringify(view.body)).not.toContain('mqtt-pass-4411');
    expect(JSON.stringify(view.body)).not.toContain(created.body.signing_secret);

    expect((await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}/destinations`)).body.items).toHaveLength(2);
    expect((await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/destinations/${id}`, { max_per_second: 3 })).body).toMatchObject({ id, max_per_second: 3 });
    expect((await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations/${id}/pause`)).body).toMatchObject({ paused: true });
    expect((await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations/primary/pause`)).body).toMatchObject({ id: 'primary', paused: true });
    expect((await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations/primary/resume`)).body).toMatchObject({ id: 'primary', paused: false });

    const invalid = await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/destinations/${id}`, { target: 'mqtt://broker.example.com/#' });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ error: 'validation_failed', details: [{ path: 'target', problem: 'topic must not contain wildcards (+ #)' }] });
    expect((await adminCall(api, 'GET', '/admin/v1/accounts/2147483000/destinations')).status).toBe(404);
    expect((await adminCall(api, 'POST', '/admin/v1/accounts/2147483000/destinations', { type: 'webhook', target: WEBHOOK })).status).toBe(404);
    expect((await adminCall(api, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/dst_000000000000000000000000`)).status).toBe(404);

    expect((await adminCall(api, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/${id}`)).status).toBe(204);
    expect((await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}`)).body.destinations.map((item: Json) => item.id)).toEqual(['primary']);
  });
});

describe('the event view’s deliveries and redelivery per destination', () => {
  let account: TestAccount;
  let seq: string;
  let eventId: string;
  let delivered: string;
  let waiting: string;
  let gone: string;

  beforeAll(async () => {
    account = await createAccount(api);
    const add = async (target: string): Promise<string> => (await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations`, { type: 'webhook', target })).body.id as string;
    [delivered, waiting, gone] = [await add(`${WEBHOOK}/a`), await add(`${WEBHOOK}/b`), await add(`${WEBHOOK}/c`)];
    await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations/${waiting}/pause`);
    eventId = `dst-view-${Date.now()}`;
    [{ seq }] = await insertEventRows(namespace.db, account.id, [{ eventId, action: 'Customer_create', message: { id: 1 } }]);
    // The primary waiting for its retry, one destination delivered, one held by its pause, one waiting for a retry.
    await insertDeliveryRows(namespace.db, [
      { seq, destinationId: 'primary', accountId: account.id, status: 'retrying', attempts: 1, seriesAttempts: 1, lastError: 'HTTP 500', nextAttemptAt: new Date(Date.now() + 3_600_000) },
      { seq, destinationId: delivered, accountId: account.id, status: 'delivered', attempts: 1, seriesAttempts: 1 },
      { seq, destinationId: waiting, accountId: account.id, status: 'queued', held: 'paused' },
      { seq, destinationId: gone, accountId: account.id, status: 'retrying', attempts: 1, seriesAttempts: 1, nextAttemptAt: new Date() },
    ]);
    await namespace.db.query(
      `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status, error, destination_id)
       VALUES ($1, 0, 1, now(), 12, 'https://primary.example.com/', '{}', '{}', 500, 'HTTP 500', 'primary'),
              ($1, 0, 1, now(), 8, $3, '{}', '{}', 200, NULL, $2),
              ($1, 0, 1, now(), 9, $5, '{}', '{}', 503, 'HTTP 503', $4)`,
      [seq, delivered, `${WEBHOOK}/a`, gone, `${WEBHOOK}/c`],
    );
    expect((await adminCall(api, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/${gone}`)).status).toBe(204);
  });

  it('lists the primary first, then each destination with its own status, error and attempts', async () => {
    const view = await adminCall(api, 'GET', `/admin/v1/events/${eventId}`);
    expect(view.status).toBe(200);
    expect(view.body.attempts.map((attempt: Json) => attempt.url)).toEqual(['https://primary.example.com/']);
    expect(view.body.deliveries.map((delivery: Json) => ({ ...delivery, attempts: delivery.attempts.map((attempt: Json) => attempt.response_status) }))).toEqual([
      { destination_id: 'primary', status: 'retrying', last_error: 'HTTP 500', attempts: [500] },
      { destination_id: delivered, status: 'delivered', last_error: null, attempts: [200] },
      { destination_id: waiting, status: 'queued', last_error: null, attempts: [] },
      { destination_id: gone, status: 'failed', last_error: 'destination deleted', attempts: [503] },
    ]);
    const auth = `Bearer ${await portalToken(api, account.id)}`;
    expect((await portalCall(api, auth, 'GET', `events/${eventId}`)).body.deliveries).toEqual(view.body.deliveries);
  });

  it('redelivers to one destination only, then to every live one', async () => {
    const row = async (destination: string): Promise<Json> =>
      (await namespace.db.query('SELECT status, series, series_attempts, attempts FROM deliveries WHERE event_seq = $1 AND destination_id = $2', [seq, destination])).rows[0] as Json;
    const eventSeries = async (): Promise<number | undefined> => (await primaryDeliveryOf(namespace.db, eventId))?.series;

    const one = await adminCall(api, 'POST', `/admin/v1/events/${eventId}/redeliver`, { destination_id: delivered });
    expect(one).toEqual({ status: 202, body: { event_id: eventId, status: 'queued', series: 1 } });
    expect(await row(delivered)).toEqual({ status: 'queued', series: 1, series_attempts: 0, attempts: 1 });
    expect(await eventSeries()).toBe(0);
    expect(await row(waiting)).toMatchObject({ series: 0 });
    expect((await namespace.getJob(`e${seq}-d${delivered}-s1-a0`))?.data).toEqual({ eventSeq: seq, accountId: account.id, series: 1, attempt: 0, destinationId: delivered });

    const all = await adminCall(api, 'POST', `/admin/v1/events/${eventId}/redeliver`);
    expect(all.body).toEqual({ event_id: eventId, status: 'queued', series: 1 });
    expect(await eventSeries()).toBe(1);
    expect(await row(delivered)).toMatchObject({ series: 2 });
    expect(await row(waiting)).toMatchObject({ series: 1, status: 'queued' });
    expect(await row(gone)).toMatchObject({ series: 0, status: 'failed' });
    expect(await namespace.getJob(`e${seq}-s1-a0`)).toBeDefined();
    expect(await namespace.getJob(`e${seq}-d${waiting}-s1-a0`)).toBeDefined();

    const auth = `Bearer ${await portalToken(api, account.id)}`;
    expect((await portalCall(api, auth, 'POST', `events/${eventId}/redeliver`, { destination_id: 'primary' })).body).toEqual({ event_id: eventId, status: 'queued', series: 2 });
    expect(await row(delivered)).toMatchObject({ series: 2 });

    expect((await adminCall(api, 'POST', `/admin/v1/events/${eventId}/redeliver`, { destination_id: gone })).status).toBe(404);
    expect((await adminCall(api, 'POST', `/admin/v1/events/${eventId}/redeliver`, { destination_id: 'dst_000000000000000000000000' })).status).toBe(404);
    const invalid = await adminCall(api, 'POST', `/admin/v1/events/${eventId}/redeliver`, { destination_id: 7 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.details).toEqual([{ path: 'destination_id', problem: expect.any(String) }]);
  });
});

describe('a deleted destination', () => {
  it('deletes its credentials at once (sealed target and auth, secrets, shown target), keeping the row its deliveries name', async () => {
    const credentials = `SELECT target, target_shown, auth, signing_secret, previous_signing_secret, deleted_at IS NOT NULL AS deleted FROM destinations WHERE id = $1`;
    const account = await createAccount(api);
    const created = await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations`, {
      type: 'webhook',
      target: 'https://hooks.example.com/T0/B0/secret-path',
      auth: { type: 'header', name: 'x-api-key', value: 'key-123' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await namespace.db.query(credentials, [id])).rows[0]).toMatchObject({ target: expect.any(String), auth: expect.any(String), signing_secret: expect.any(String), deleted: false });
    expect((await adminCall(api, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/${id}`)).status).toBe(204);
    expect((await namespace.db.query(credentials, [id])).rows).toEqual([{ target: null, target_shown: null, auth: null, signing_secret: null, previous_signing_secret: null, deleted: true }]);
  });
});
