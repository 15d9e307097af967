import type Redis from 'ioredis';
import { REDIS } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { useApps } from '../support/apps';
import { createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { primaryDeliveriesOfAccount } from '../support/model-deliveries';
import { TestReceiver } from '../support/receiver';
import { type SentinelDeploymentHandle, startSentinelDeployment } from '../support/redis-deployments';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';

/**
 * Failover drill: ingest, config API and worker talk to Redis through three sentinels; the primary is
 * SIGKILLed while events keep arriving. The sentinels promote the replica, every process follows it
 * without a restart, and every accepted event is delivered (jobs the dead primary had not replicated
 * are re-enqueued by the reconciler from PostgreSQL).
 */
jest.setTimeout(120_000);

const namespace = new IsolatedNamespace('sentinel-failover');
const receiver = new TestReceiver();
let sentinel: SentinelDeploymentHandle;

beforeAll(async () => {
  sentinel = await startSentinelDeployment('callbacks-drill');
  await receiver.start();
});
const { configApi, ingest, worker } = useApps(
  {
    configApi: ConfigApiModule,
    ingest: IngestModule,
    worker: [DeliveryWorkerModule, { RECONCILE_INTERVAL: '1s', DELIVERY_TIMEOUT_MS: '2000', RETRY_SCHEDULE: '200ms,500ms,1s,2s,3s,5s,5s,5s' }],
  },
  { namespace, overrides: () => ({ REDIS_SENTINELS: sentinel.setting, REDIS_SENTINEL_NAME: sentinel.name }) },
);
// After the apps have closed: they must not lose their Redis while they shut down.
afterAll(async () => {
  await receiver.stop();
  await sentinel?.stop();
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

it('follows the promoted replica when the primary dies mid-run, and delivers every accepted event', async () => {
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  const accepted: string[] = [];
  let sent = 0;
  const sendRound = async (): Promise<void> => {
    const events = Array.from({ length: 20 }, () => {
      sent += 1;
      return { account_id: account.id, action: 'Customer_create', message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: sent } };
    });
    const response = await fetch(`${ingest.url}/v1/events/batch`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify({ events }) });
    // Ingest stores in PostgreSQL first: a Redis failover never costs an accepted answer.
    expect(response.status).toBe(202);
    const { results } = (await response.json()) as { results: { status: string; event_id: string }[] };
    for (const result of results) if (result.status === 'accepted') accepted.push(result.event_id);
  };

  for (let round = 0; round < 10; round += 1) {
    await sendRound();
    await pause(50);
  }
  const killedPort = await sentinel.killPrimary();
  let promotedPort: number | null = null;
  const failover = waitFor(
    'the sentinels to promote the replica',
    async () => {
      const port = await sentinel.primaryPort();
      return port !== killedPort ? port : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  ).then((port) => (promotedPort = port));
  // Events keep arriving while there is no primary and while the processes find the new one.
  while (promotedPort === null) {
    await sendRound();
    await pause(100);
  }
  await failover;
  for (let round = 0; round < 10; round += 1) {
    await sendRound();
    await pause(50);
  }
  expect(accepted.length).toBe(sent);

  await waitFor(
    `all ${accepted.length} accepted events to be delivered`,
    async () => {
      const rows = await primaryDeliveriesOfAccount(namespace.db, account.id);
      return rows.filter((row) => row.status === 'delivered').length === accepted.length;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const received = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
  expect(accepted.filter((eventId) => !received.has(eventId))).toEqual([]);

  // No restart: the same processes now talk to the promoted server.
  for (const app of [configApi, ingest, worker]) {
    const redis = app.app.get<Redis>(REDIS);
    await waitFor('the command connection to be up again', async () => (await redis.ping()) === 'PONG');
    expect(redis.stream.remotePort).toBe(promotedPort);
  }
  const ready = await fetch(`${worker.url}/health/ready`);
  expect(ready.status).toBe(200);
});
