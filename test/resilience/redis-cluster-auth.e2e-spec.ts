import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, ingestSampleEvent, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { TestReceiver } from '../support/receiver';
import { type RedisClusterHandle, startRedisCluster } from '../support/redis-deployments';
import { waitFor } from '@app/testing';

/**
 * A Redis Cluster whose nodes require a password (requirepass and masterauth): with REDIS_PASSWORD the
 * whole path works (ingest enqueues, the worker delivers); without it the apps say they are not ready.
 */
jest.setTimeout(90_000);

const PASSWORD = 'cluster-secret-0123';
const namespace = new IsolatedNamespace('redis-cluster-auth');
const receiver = new TestReceiver();
let cluster: RedisClusterHandle;
const apps: RunningApp[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster(3, PASSWORD);
  await namespace.setUp();
  await receiver.start();
});

afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
  await receiver.stop();
  await namespace.tearDown();
  await cluster?.stop();
});

async function started(...args: Parameters<typeof startApp>): Promise<RunningApp> {
  const app = await startApp(...args);
  apps.push(app);
  return app;
}

it('delivers through a password-protected cluster given REDIS_PASSWORD', async () => {
  const overrides = { ...namespace.overrides, REDIS_CLUSTER_NODES: cluster.setting, REDIS_PASSWORD: PASSWORD };
  const configApi = await started(ConfigApiModule, overrides);
  const ingest = await started(IngestModule, overrides);
  await started(DeliveryWorkerModule, { ...overrides, RECONCILE_INTERVAL: '1m' });
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });

  const eventId = await ingestSampleEvent(ingest, account.id);
  await waitFor('the callback to arrive', () => receiver.requests.some((request) => request.headers['webhook-id'] === eventId));
  expect((await fetch(`${ingest.url}/health/ready`)).status).toBe(200);
  expect(await cluster.keysPerNode()).not.toEqual([0, 0, 0]);
});

it('reports not ready without the password instead of pretending', async () => {
  const ingest = await started(IngestModule, { ...namespace.overrides, REDIS_CLUSTER_NODES: cluster.setting });
  const ready = await fetch(`${ingest.url}/health/ready`);
  expect(ready.status).toBe(503);
  // Which check failed, and why, in the answer itself.
  expect(await ready.json()).toEqual({
    error: 'service_unavailable',
    message: expect.stringMatching(/^not ready: redis down: /) as unknown,
    status: 'unavailable',
    checks: { postgres: 'ok', redis: expect.stringMatching(/^down: /) as unknown, secrets: 'ok' },
  });
});
