import { Webhook } from 'standardwebhooks';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, ingestSampleEvent } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { openApiCall } from '../support/open-api-client';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';

/*
 * Destinations end to end with the real ingest and worker (CONTRACT §11): an event reaches a webhook
 * destination signed with its own secret, the admin event view lists each destination's delivery (a
 * paused one `queued` with no attempts), a redelivery to one destination calls only that one, and
 * resume sends what waited. Own database and Redis prefix: no other suite's worker takes these jobs.
 */
const namespace = new IsolatedNamespace('destinations-event-view');

let configApi: RunningApp;
let ingest: RunningApp;
let worker: RunningApp;
const live = new TestReceiver();
const held = new TestReceiver();

function headersOf(request: ReceivedRequest): Record<string, string> {
  return {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
}

beforeAll(async () => {
  await namespace.setUp();
  const settings = { ...namespace.overrides, RETRY_SCHEDULE: '200ms,400ms', DELIVERY_TIMEOUT_MS: '2000' };
  configApi = await startApp(ConfigApiModule, settings);
  ingest = await startApp(IngestModule, settings);
  worker = await startApp(DeliveryWorkerModule, settings);
  await Promise.all([live.start(), held.start()]);
});

afterAll(async () => {
  await worker?.close();
  await ingest?.close();
  await configApi?.close();
  await Promise.all([live.stop(), held.stop()]);
  await namespace.tearDown();
});

it('delivers to each destination on its own, shows each delivery, redelivers to one, and resumes a paused one', async () => {
  const account = await createAccount(configApi);
  expect((await openApiCall(configApi.url, account, 'POST', 'set_permissions', { body: { permissions: { customer_create: true } } })).status).toBe(200);
  const add = async (url: string): Promise<Json> => {
    const answer = await openApiCall<{ destination: Json }>(configApi.url, account, 'POST', 'destinations', { body: { type: 'webhook', target: url, actions: ['Customer_create'] } });
    expect(answer.status).toBe(200);
    return answer.body.destination;
  };
  const liveDestination = await add(live.url);
  const heldDestination = await add(held.url);
  expect((await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/destinations/${heldDestination.id as string}/pause`)).status).toBe(200);

  const eventId = await ingestSampleEvent(ingest, account.id);
  const first = await waitFor('the event at the live destination', () => live.requests.find((request) => request.headers['webhook-id'] === eventId));
  expect(() => new Webhook(liveDestination.signing_secret as string).verify(first.body, headersOf(first))).not.toThrow();
  expect(() => new Webhook(account.signing_secret).verify(first.body, headersOf(first))).toThrow();
  expect(JSON.parse(first.body)).toMatchObject({ action: 'Customer_create' });

  const deliveryOf = (view: Json, id: string): Json | undefined => (view.deliveries as Json[]).find((delivery) => delivery.destination_id === id);
  // The paused destination's job ended without an attempt and left its delivery held, undated (the worker's hold).
  await waitFor('the held delivery parked by the worker', async () => {
    const rows = await namespace.db.query(
      `SELECT 1 FROM deliveries d JOIN open_deliveries o ON o.event_seq = d.event_seq AND o.destination_id = d.destination_id
        WHERE d.destination_id = $1 AND d.status = $2 AND d.next_attempt_at IS NULL AND o.held = 'paused'`,
      [heldDestination.id, 'queued'],
    );
    return rows.rowCount === 1;
  });
  const view = await waitFor('the live delivery logged', async () => {
    const answer = (await adminCall(configApi, 'GET', `/admin/v1/events/${eventId}`)).body;
    return deliveryOf(answer, liveDestination.id as string)?.status === 'delivered' ? answer : false;
  });
  expect((view.deliveries as Json[]).map((delivery) => delivery.destination_id)).toEqual(['primary', liveDestination.id, heldDestination.id]);
  expect(deliveryOf(view, liveDestination.id as string)?.attempts).toEqual([expect.objectContaining({ attempt: 1, response_status: 200, request_body: first.body })]);
  expect(deliveryOf(view, heldDestination.id as string)).toEqual({ destination_id: heldDestination.id, status: 'queued', last_error: 'paused', attempts: [] });
  expect(view.attempts).toEqual(deliveryOf(view, 'primary')?.attempts);
  expect(held.requests).toHaveLength(0);

  const redelivered = await adminCall(configApi, 'POST', `/admin/v1/events/${eventId}/redeliver`, { destination_id: liveDestination.id });
  expect(redelivered.status).toBe(202);
  await waitFor('the redelivery at the live destination', () => live.requests.filter((request) => request.headers['webhook-id'] === eventId).length === 2);
  await waitFor('two attempts on the live delivery', async () => {
    const answer = (await adminCall(configApi, 'GET', `/admin/v1/events/${eventId}`)).body;
    return deliveryOf(answer, liveDestination.id as string)?.attempts.length === 2;
  });
  expect(held.requests).toHaveLength(0);

  const resumed = await openApiCall<{ destination: Json }>(configApi.url, account, 'POST', `destinations/${heldDestination.id as string}/resume`);
  expect(resumed.body.destination).toMatchObject({ id: heldDestination.id, paused: false });
  const late = await waitFor('the held event after resume', () => held.requests.find((request) => request.headers['webhook-id'] === eventId));
  expect(() => new Webhook(heldDestination.signing_secret as string).verify(late.body, headersOf(late))).not.toThrow();
  await waitFor('the held delivery logged as delivered', async () => {
    const answer = (await adminCall(configApi, 'GET', `/admin/v1/events/${eventId}`)).body;
    return deliveryOf(answer, heldDestination.id as string)?.status === 'delivered';
  });
});
