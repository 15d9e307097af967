import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { OPERATIONAL_ACTIONS } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, ingestSampleEvent, type TestAccount } from '../support/fixtures';
import { openApiCall, signedQuery } from '../support/open-api-client';
import { portalCall, portalToken } from '../support/portal-client';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import { spawnWorker, useOwnRedisPrefix, type WorkerProcess } from '../support/worker-process';

useOwnRedisPrefix('operational-events');
// A real worker process (ts-node) and a disabling clock of seconds, on a machine other runs share.
jest.setTimeout(180_000);

/**
 * Short clocks, so the whole story takes seconds: the breaker opens after two failed calls and probes
 * every second, a destination failing for 4 s is disabled, and a delivery has retries to spare meanwhile.
 */
const WORKER_SETTINGS = {
  BREAKER_FAILURE_THRESHOLD: '2',
  BREAKER_COOLDOWN: '1s',
  ENDPOINT_DISABLE_AFTER: '4s',
  RETRY_SCHEDULE: Array.from({ length: 12 }, () => '500ms').join(','),
  DELIVERY_TIMEOUT_MS: '5000',
  RECONCILE_INTERVAL: '1s',
};

interface OperationalBody {
  action: string;
  message: { destination_id: string; target: string | null; reason: string; at: string };
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

describe('operational events through the real worker (CONTRACT §14)', () => {
  let configApi: RunningApp;
  let ingest: RunningApp;
  let worker: WorkerProcess;
  let account: TestAccount;
  let document: OpenAPIObject;
  let validate: (action: string, body: unknown) => string[];
  const primary = new TestReceiver().respondStatus(500);
  const watcher = new TestReceiver();
  const bystander = new TestReceiver();
  let watcherId = '';
  let watcherSecret = '';
  let bystanderId = '';
  let customerId = 0;

  /** What the watcher destination was sent, each request's signature checked with its own secret. */
  function watched(): OperationalBody[] {
    return watcher.requests.map((request) => {
      new Webhook(watcherSecret).verify(request.body, {
        'webhook-id': header(request, 'webhook-id'),
        'webhook-timestamp': header(request, 'webhook-timestamp'),
        'webhook-signature': header(request, 'webhook-signature'),
      });
      return JSON.parse(request.body) as OperationalBody;
    });
  }

  async function watcherGot(action: string): Promise<OperationalBody> {
    return waitFor(`the watcher destination to receive ${action}`, () => watched().find((body) => body.action === action), { timeoutMs: 60_000, intervalMs: 200 });
  }

  async function ingestCustomers(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1) {
      customerId += 1;
      ids.push(await ingestSampleEvent(ingest, account.id, 'Customer_create', { id: customerId }));
    }
    return ids;
  }

  async function primaryView(): Promise<Json> {
    const answer = await adminCall(configApi, 'GET', `/admin/v1/accounts/${account.id}/destinations`);
    expect(answer.status).toBe(200);
    return (answer.body.items as Json[]).find((view) => view.id === 'primary') as Json;
  }

  /** The whole pull feed from its start (the Open API allows 60 calls a minute: callers poll slowly). */
  async function feed(): Promise<{ event_id: string; action: string; message: Json }[]> {
    const items: { event_id: string; action: string; message: Json }[] = [];
    let after: string | undefined;
    for (;;) {
      const answer = await openApiCall<{ items: typeof items; next_cursor: string }>(configApi.url, account, 'GET', 'events', { query: { limit: '500', ...(after ? { after } : {}) } });
      expect(answer.status).toBe(200);
      items.push(...answer.body.items);
      if (answer.body.items.length === 0 || answer.body.next_cursor === after) return items;
      after = answer.body.next_cursor;
    }
  }

  async function openApi(operation: string, body: unknown): Promise<Json> {
    const answer = await openApiCall<Json>(configApi.url, account, 'POST', operation, { body });
    expect({ operation, status: answer.status, code: answer.body.code }).toEqual({ operation, status: 200, code: 1000 });
    return answer.body;
  }

  beforeAll(async () => {
    await Promise.all([primary.start(), watcher.start(), bystander.start()]);
    configApi = await startApp(ConfigApiModule);
    ingest = await startApp(IngestModule);
    worker = spawnWorker(WORKER_SETTINGS);
    await worker.started;

    document = (await (await fetch(`${configApi.url}/docs/openapi.json`)).json()) as OpenAPIObject;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'https://document.test/openapi.json', components: document.components });
    validate = (action, body) => {
      const content = (document.webhooks?.[action]?.post?.requestBody as { content: Record<string, { schema: { $ref: string } }> }).content;
      const check = ajv.compile({ $ref: `https://document.test/openapi.json${content['application/json'].schema.$ref}` });
      return check(body) ? [] : (check.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
    };

    account = await createAccount(configApi);
    await openApi('set_url', { push_url: primary.url });
    await openApi('set_push_content_type', { push_content_type: 'JSON' });
    await openApi('set_permissions', { permissions: { customer_create: true } });
    const created = await openApi('destinations', { type: 'webhook', target: watcher.url, actions: [...OPERATIONAL_ACTIONS] });
    watcherId = created.destination.id as string;
    watcherSecret = created.destination.signing_secret as string;
    // Every action, named by no list: it takes the customer events and none of the operational ones.
    bystanderId = (await openApi('destinations', { type: 'webhook', target: bystander.url })).destination.id as string;
  });

  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await ingest?.close();
    await configApi?.close();
    await Promise.all([primary.stop(), watcher.stop(), bystander.stop()]);
  });

  it('documents each action with a schema that refuses a wrong body', () => {
    const good = { action: 'Destination_failing', message: { destination_id: 'primary', target: null, reason: 'r', at: '2025-01-01T00:00:00.000Z' } };
    expect(validate('Destination_failing', good)).toEqual([]);
    expect(validate('Destination_failing', { ...good, action: 'Destination_disabled' })).not.toEqual([]);
    expect(validate('Destination_failing', { ...good, message: { ...good.message, reason: undefined } })).not.toEqual([]);
    expect(validate('Destination_failing', { ...good, message: { ...good.message, at: 'yesterday' } })).not.toEqual([]);
  });

  it('tells the watcher when the primary fails, is disabled and is enabled again, at most once each in 10 minutes', async () => {
    // 1. The primary answers 500: after two failed calls its breaker opens.
    await ingestCustomers(3);
    const failing = await watcherGot('Destination_failing');
    expect(validate('Destination_failing', failing)).toEqual([]);
    expect(failing.message).toMatchObject({ destination_id: 'primary', target: primary.url });
    expect(failing.message.reason).toContain('circuit breaker opened after 2 consecutive failed calls');

    // 2. Failing for ENDPOINT_DISABLE_AFTER: disabled at the next probe that falls due.
    const disabled = await watcherGot('Destination_disabled');
    expect(validate('Destination_disabled', disabled)).toEqual([]);
    expect(disabled.message).toMatchObject({ destination_id: 'primary', target: primary.url });
    expect((await primaryView()).state.disabled_at).not.toBeNull();

    // 3. An operator enables it (config-api emits this one, before the workers hear of it).
    primary.respondStatus(200);
    const enabled = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/endpoint/enable`);
    expect(enabled.status).toBe(200);
    const recovered = await watcherGot('Destination_recovered');
    expect(validate('Destination_recovered', recovered)).toEqual([]);
    expect(recovered.message).toMatchObject({ destination_id: 'primary', target: primary.url, reason: 'enabled again (enable)' });

    // 4. Within the 10 minutes it fails again and recovers again: the breaker opens and closes, the account hears nothing more.
    const [again] = await ingestCustomers(1);
    await waitFor('the primary to take an event again', () => primary.requests.some((request) => header(request, 'webhook-id') === again), { timeoutMs: 60_000 });
    primary.respondStatus(503);
    await ingestCustomers(3);
    await waitFor('the primary breaker to open again', async () => (await primaryView()).state.breaker === 'open', { timeoutMs: 60_000, intervalMs: 250 });
    primary.respondStatus(200);
    const lastIds = await ingestCustomers(1);
    await waitFor('the primary breaker to close again', async () => (await primaryView()).state.breaker === 'closed', { timeoutMs: 60_000, intervalMs: 250 });
    await waitFor('the last event to reach the primary', () => primary.requests.some((request) => header(request, 'webhook-id') === lastIds[0]), { timeoutMs: 60_000 });
    // The watcher would have had them by now: it answers at once, and takes nothing else.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(watched().map((body) => body.action)).toEqual(['Destination_failing', 'Destination_disabled', 'Destination_recovered']);
    for (const body of watched()) expect(validate(body.action, body)).toEqual([]);

    // Never to the destination it is about, nor to one whose actions do not name it.
    for (const receiver of [primary, bystander]) {
      expect(receiver.requests.map((request) => (JSON.parse(request.body) as { action: string }).action).filter((action) => action.startsWith('Destination_'))).toEqual([]);
    }
    expect(bystander.requests.length).toBeGreaterThan(0);
  });

  it('lists them in the pull feed whatever the permissions, and in the admin API and portal', async () => {
    // No permission on at all: the customer events drop out of the feed, the operational ones stay.
    await openApi('set_permissions', { permissions: { customer_create: false } });
    const items = await waitFor(
      'the three operational events in the feed',
      async () => {
        const all = await feed();
        return all.length === 3 ? all : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 2000 },
    );
    expect(items.map((item) => item.action)).toEqual(['Destination_failing', 'Destination_disabled', 'Destination_recovered']);
    for (const item of items) expect(validate(item.action, { action: item.action, message: item.message })).toEqual([]);
    expect(items.map((item) => item.event_id)).toEqual(watcher.requests.map((request) => header(request, 'webhook-id')));

    const listed = await adminCall(configApi, 'GET', `/admin/v1/events?account_id=${account.id}&action=Destination_failing`);
    expect(listed.status).toBe(200);
    expect((listed.body.items as Json[]).map((item) => item.event_id)).toEqual([items[0].event_id]);
    const detail = await adminCall(configApi, 'GET', `/admin/v1/events/${items[0].event_id}`);
    const deliveries = Object.fromEntries((detail.body.deliveries as Json[]).map((delivery) => [delivery.destination_id, delivery.status]));
    expect(deliveries).toEqual({ primary: 'filtered', [watcherId]: 'delivered' });

    const token = await portalToken(configApi, account.id);
    const portal = await portalCall(configApi, `Bearer ${token}`, 'GET', 'events?action=Destination_disabled');
    expect(portal.status).toBe(200);
    expect((portal.body.items as Json[]).map((item) => item.event_id)).toEqual([items[1].event_id]);
    const portalDetail = await portalCall(configApi, `Bearer ${token}`, 'GET', `events/${items[2].event_id}`);
    expect(portalDetail.body).toMatchObject({ action: 'Destination_recovered', message: { destination_id: 'primary' } });
  });

  it('tells the watcher when another destination, disabled, is given its target again', async () => {
    // As the worker leaves a destination it disabled.
    await configApi.app.get(DataSource).query("UPDATE destinations SET disabled_at = now(), disabled_reason = 'test', failing_since = now() WHERE id = $1", [bystanderId]);
    const updated = await fetch(`${configApi.url}/open_api_v1/destinations/${bystanderId}?${signedQuery(account).toString()}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: bystander.url }),
    });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as Json).destination.state.disabled_at).toBeNull();
    const recovered = await waitFor('a Destination_recovered about the bystander', () => watched().find((body) => body.action === 'Destination_recovered' && body.message.destination_id === bystanderId), { timeoutMs: 30_000, intervalMs: 200 });
    expect(validate('Destination_recovered', recovered)).toEqual([]);
    expect(recovered.message).toMatchObject({ target: bystander.url, reason: 'enabled again (a new target)' });
  });
});
