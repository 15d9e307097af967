import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSION_KEYS } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type ApiDocument, openApiClientDocument } from '../../clients/tools/openapi-subset';
import { EventCallbacks, verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src';
import { useApps } from '../support/apps';
import { codeBlocks, requireBuiltClient, ROOT, run } from '../support/client-examples';
import { createAccount, type TestAccount } from '../support/fixtures';
import { useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { useOwnRedisPrefix } from '../support/worker-process';

/**
 * The TypeScript client (CONTRACT §14) against the real config-api and delivery worker: every Open API
 * operation through `EventCallbacks`, answers and errors typed, a real callback verified, the document it
 * is generated from equal to the one config-api serves, and the README's and docs' examples run.
 */
useOwnRedisPrefix('client-typescript');
jest.setTimeout(120_000);

const { configApi } = useApps({
  configApi: ConfigApiModule,
  worker: [DeliveryWorkerModule, { RETRY_SCHEDULE: '200ms,400ms', DELIVERY_TIMEOUT_MS: '10000', RECONCILE_INTERVAL: '1m' }],
});
let account: TestAccount;
let client: EventCallbacks;
const receiver = useReceivers();

beforeAll(async () => {
  account = await createAccount(configApi);
  client = new EventCallbacks({ baseUrl: configApi.url, email: account.email, token: account.open_api_token });
});

it('is generated from the Open API part of the document config-api serves', async () => {
  const served = (await (await fetch(`${configApi.url}/docs/openapi.json`)).json()) as ApiDocument;
  const checkedIn = JSON.parse(readFileSync(join(ROOT, 'clients', 'openapi.json'), 'utf8')) as ApiDocument;
  expect(openApiClientDocument(served)).toEqual(checkedIn);
  const operationIds = Object.values(checkedIn.paths).flatMap((item) => Object.values(item).map((operation) => (operation as { operationId: string }).operationId));
  expect(operationIds.sort()).toEqual([
    'create_destination', 'delete_destination', 'list_destinations', 'list_events', 'pause_destination', 'portal_link', 'push_settings',
    'resume_destination', 'send_test_event', 'set_delivery_options', 'set_permissions', 'set_push_content_type', 'set_url', 'update_destination',
  ]);
});

it('signs every call itself and answers the settings operations typed', async () => {
  const hook = await receiver();
  const setUrl = await client.setUrl({ body: { push_url: hook.url } });
  expect(setUrl.error).toBeUndefined();
  expect(setUrl.data).toEqual({ code: 1000, message: 'OK', push_url: hook.url });

  const contentType = await client.setPushContentType({ body: { push_content_type: 'JSON' } });
  expect(contentType.data?.webhook_push_type).toBe('JSON');

  const permissions = await client.setPermissions({ body: { permissions: { customer_create: true, organization_update: true } } });
  expect(Object.keys(permissions.data?.permissions ?? {}).sort()).toEqual([...PERMISSION_KEYS].sort());
  expect(permissions.data?.permissions).toMatchObject({ customer_create: true, organization_update: true, customer_destroy: false });

  const options = await client.setDeliveryOptions({ body: { ordering: 'subject', max_per_second: 25 } });
  expect(options.data).toEqual({ code: 1000, message: 'OK', ordering: 'subject', max_per_second: 25 });

  const settings = await client.pushSettings();
  expect(settings.data).toMatchObject({ code: 1000, push_url: hook.url, push_content_type: 'JSON', ordering: 'subject', max_per_second: 25 });

  const link = await client.portalLink();
  expect(link.data?.url).toMatch(/\/portal#.+/);
  expect(Number.isNaN(Date.parse(link.data?.expires_at ?? ''))).toBe(false);
});

it('manages destinations, pausing and resuming them and the primary', async () => {
  const hook = await receiver();
  const created = await client.createDestination({ body: { type: 'webhook', target: hook.url, actions: ['Customer_create'], ordering: 'subject' } });
  expect(created.error).toBeUndefined();
  const destination = created.data?.destination;
  expect(destination).toMatchObject({ type: 'webhook', target: hook.url, actions: ['Customer_create'], paused: false, state: { breaker: 'closed' } });
  expect(destination?.signing_secret).toMatch(/^whsec_/);
  const id = destination?.id ?? '';

  const updated = await client.updateDestination({ path: { id }, body: { max_per_second: 5 } });
  expect(updated.data?.destination).toMatchObject({ id, max_per_second: 5 });
  expect(updated.data?.destination.signing_secret).toBeUndefined();
  expect((await client.pauseDestination({ path: { id } })).data?.destination.paused).toBe(true);
  expect((await client.resumeDestination({ path: { id } })).data?.destination.paused).toBe(false);
  expect((await client.pauseDestination({ path: { id: 'primary' } })).data?.destination).toMatchObject({ id: 'primary', paused: true });
  expect((await client.resumeDestination({ path: { id: 'primary' } })).data?.destination.paused).toBe(false);

  const listed = await client.listDestinations();
  expect(listed.data?.items.map((item) => item.id)).toEqual(['primary', id]);
  expect((await client.deleteDestination({ path: { id } })).data).toEqual({ code: 1000, message: 'OK' });
  const gone = await client.deleteDestination({ path: { id } });
  expect(gone.response.status).toBe(404);
  expect(gone.error).toMatchObject({ code: 2000, exception: { message: expect.stringContaining('id') } });
});

it('answers refusals as typed error values: a wrong value, wrong credentials', async () => {
  const wrong = await client.setDeliveryOptions({ body: { max_per_second: 0 } });
  expect(wrong.data).toBeUndefined();
  expect(wrong.response.status).toBe(400);
  expect(wrong.error).toMatchObject({ code: 2000, message: 'Unknown error', exception: { message: expect.stringContaining('max_per_second') } });

  const stranger = new EventCallbacks({ baseUrl: configApi.url, email: account.email, token: 'not-the-token' });
  const refused = await stranger.pushSettings();
  expect(refused.response.status).toBe(401);
  expect(refused.error).toMatchObject({ code: 2059 });
});

it('sends a test event that reaches the feed, and whose callback verifyWebhook accepts with the account secret', async () => {
  const hook = await receiver();
  expect((await client.setUrl({ body: { push_url: hook.url } })).error).toBeUndefined();
  const sent = await client.sendTestEvent({ body: { action: 'Customer_create' } });
  const eventId = sent.data?.event_id ?? '';
  expect(eventId).toMatch(/^test_/);

  const callback = await waitFor('the test event at the receiver', () => hook.requests.find((request) => request.headers['webhook-id'] === eventId));
  expect(() => verifyWebhook(account.signing_secret, callback.headers, callback.body)).not.toThrow();
  expect(() => verifyWebhook(account.signing_secret, callback.headers, `${callback.body} `)).toThrow(WebhookVerificationError);

  // Held back while any write transaction begun before it is open, anywhere in the cluster (CONTRACT §10).
  const page = await waitFor('the test event in the feed', async () => {
    const answer = await client.listEvents({ query: { limit: 500 } });
    return answer.data?.items.some((item) => item.event_id === eventId) ? answer.data : undefined;
  }, { timeoutMs: 60_000, intervalMs: 200 });
  expect(page.items.find((item) => item.event_id === eventId)).toMatchObject({ action: 'Customer_create', message: expect.any(Object), created_at: expect.any(String) });
  expect(typeof page.next_cursor).toBe('string');
  const after = await client.listEvents({ query: { after: page.next_cursor } });
  expect(after.data?.items).toEqual([]);
});

describe('the package as an application installs it', () => {
  let folder: string;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? '',
    EVENT_CALLBACKS_URL: configApi.url,
    EVENT_CALLBACKS_EMAIL: account.email,
    EVENT_CALLBACKS_TOKEN: account.open_api_token,
    EVENT_CALLBACKS_SECRET: account.signing_secret,
  });

  beforeAll(() => {
    requireBuiltClient();
    folder = mkdtempSync(join(tmpdir(), 'client-examples-'));
    mkdirSync(join(folder, 'node_modules', '@event-callbacks'), { recursive: true });
    symlinkSync(join(ROOT, 'clients', 'typescript'), join(folder, 'node_modules', '@event-callbacks', 'client'), 'dir');
    writeFileSync(join(folder, 'package.json'), '{"private": true, "type": "module"}\n');
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('loads through its exports map from ESM and from CommonJS', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', "import { EventCallbacks, verifyWebhook } from '@event-callbacks/client'; console.log(typeof EventCallbacks, typeof verifyWebhook);"], { cwd: folder });
    expect(esm).toMatchObject({ code: 0, stdout: 'function function\n' });
    const cjs = await run(process.execPath, ['-e', "const c = require('@event-callbacks/client'); console.log(typeof c.EventCallbacks, typeof c.verifyWebhook);"], { cwd: folder });
    expect(cjs).toMatchObject({ code: 0, stdout: 'function function\n' });
  });

  it('type-checks and runs the TypeScript examples of its README and docs/clients.md', async () => {
    const examples = [...codeBlocks('clients/typescript/README.md', 'ts'), ...codeBlocks('docs/clients.md', 'ts')];
    expect(examples.length).toBeGreaterThanOrEqual(4);
    examples.forEach((code, index) => writeFileSync(join(folder, `example-${index}.mts`), code));
    // Compiled as an application would (strict, Node's ES modules): example-N.mts → example-N.mjs beside it.
    const tsc = await run(process.execPath, [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext',
      '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'),
      ...examples.map((_, index) => join(folder, `example-${index}.mts`)),
    ], { cwd: folder });
    expect({ code: tsc.code, output: tsc.stdout + tsc.stderr }).toEqual({ code: 0, output: '' });
    for (const [index] of examples.entries()) {
      const result = await run(process.execPath, [join(folder, `example-${index}.mjs`)], { cwd: folder, env: env() });
      expect({ example: index, code: result.code, stderr: result.stderr }).toEqual({ example: index, code: 0, stderr: '' });
    }
  });
});
