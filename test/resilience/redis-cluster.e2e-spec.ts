import Redis from 'ioredis';
import { createRedisConnection, DeliveryQueues, publishSettingsChanged, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import { acquireEndpointLease, releaseEndpointLease } from '../../apps/delivery-worker/src/delivery/admission/lease-scripts';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { OpenApiRateLimiter } from '../../apps/config-api/src/open-api/open-api-rate-limiter';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { useApps } from '../support/apps';
import { createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { type RedisClusterHandle, startRedisCluster } from '../support/redis-deployments';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';

/**
 * The service on a three-master Redis Cluster of this file's own (so DBSIZE counts only its keys):
 * the sharded queue spreads over the nodes, settings notifications reach every node, and the
 * endpoint scripts find their keys in one slot.
 */
jest.setTimeout(90_000);

const namespace = new IsolatedNamespace('redis-cluster');
let cluster: RedisClusterHandle;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
});
const { configApi, ingest } = useApps({ configApi: ConfigApiModule, ingest: IngestModule }, { namespace, overrides: () => ({ REDIS_CLUSTER_NODES: cluster.setting }) });
// After the apps have closed: they must not lose their Redis while they shut down.
afterAll(async () => {
  await cluster?.stop();
});

it('spreads 3,000 events queued for 12 endpoints so that no node holds more than 80% of the keys', async () => {
  const accounts: number[] = [];
  for (let index = 0; index < 12; index += 1) {
    const account = await createAccount(configApi);
    // Twelve endpoints: twelve origins (nothing calls them, no worker runs here).
    await setCallbackSettings(configApi.app, account.id, { pushUrl: `http://127.0.0.1:${41_000 + index}/hook`, contentType: 'JSON', permissions: 'all' });
    accounts.push(account.id);
  }
  const events = Array.from({ length: 3000 }, (_, index) => ({
    account_id: accounts[index % accounts.length],
    action: 'Customer_create',
    message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: 100_000 + index },
  }));
  for (let start = 0; start < events.length; start += 1000) {
    const response = await fetch(`${ingest.url}/v1/events/batch`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({ events: events.slice(start, start + 1000) }),
    });
    expect(response.status).toBe(202);
    const results = ((await response.json()) as { results: { status: string }[] }).results;
    expect(results.filter((result) => result.status === 'accepted')).toHaveLength(1000);
  }

  const queues = ingest.app.get(DeliveryQueues, { strict: false });
  // An account's jobs beyond its first 50 wait ranked in BullMQ's prioritized set (fair turns, docs/lanes.md).
  const waiting = await Promise.all(queues.all().map(async (queue) => {
    const counts = await queue.getJobCounts('wait', 'prioritized');
    return (counts.wait ?? 0) + (counts.prioritized ?? 0);
  }));
  expect(waiting.reduce((sum, count) => sum + count, 0)).toBe(3000);
  // The twelve accounts use more than one shard, so the queue is not one slot on one node.
  expect(waiting.filter((count) => count > 0).length).toBeGreaterThan(1);

  const keys = await cluster.keysPerNode();
  const total = keys.reduce((sum, count) => sum + count, 0);
  expect(total).toBeGreaterThanOrEqual(3000);
  expect(Math.max(...keys) / total).toBeLessThanOrEqual(0.8);
});

it('delivers a settings notification published through the cluster to subscribers on every node', async () => {
  const channel = new RedisKeys(namespace.redisPrefix).settingsChannel();
  const received: string[][] = cluster.nodes.map(() => []);
  const perNode = cluster.nodes.map((node, index) => {
    const subscriber = new Redis({ host: node.host, port: node.port, maxRetriesPerRequest: null });
    subscriber.on('message', (_channel: string, message: string) => received[index].push(message));
    return subscriber;
  });
  // The worker's kind of connection, from the factory: an ioredis Cluster subscriber.
  const viaFactory = createRedisConnection(configApi.environment, 'subscriber', 'test-settings');
  const factoryReceived: string[] = [];
  viaFactory.on('message', (_channel: string, message: string) => factoryReceived.push(message));
  try {
    await Promise.all([...perNode.map((subscriber) => subscriber.subscribe(channel)), viaFactory.subscribe(channel)]);
    await publishSettingsChanged(configApi.app.get<RedisClient>(REDIS), new RedisKeys(namespace.redisPrefix), 4242);
    await waitFor('every node and the cluster subscriber to hear the change', () =>
      received.every((messages) => messages.includes('4242')) && factoryReceived.includes('4242'),
    );
  } finally {
    perNode.forEach((subscriber) => subscriber.disconnect());
    viaFactory.disconnect();
  }
});

it('runs the endpoint breaker and lease scripts, whose two keys share one slot', async () => {
  const redis = configApi.app.get<Redis>(REDIS);
  const endpointKey = 'http://breaker.example:8080';
  const keys = new RedisKeys(namespace.redisPrefix);
  expect(await redis.cluster('KEYSLOT', keys.breaker(endpointKey))).toBe(await redis.cluster('KEYSLOT', keys.leases(endpointKey)));
  const slot = await acquireEndpointLease(redis, keys, endpointKey, { id: 'lease-1', ttlMs: 10_000, limit: 1 });
  expect(slot.verdict).toBe('acquired');
  expect((await acquireEndpointLease(redis, keys, endpointKey, { id: 'lease-2', ttlMs: 10_000, limit: 1 })).verdict).toBe('busy');
  const released = await releaseEndpointLease(redis, keys, endpointKey, {
    leaseId: 'lease-1',
    signal: 'failure',
    failureThreshold: 1,
    cooldownMs: 60_000,
    error: 'HTTP 500',
  });
  expect(released.change).toBe('opened');
  expect((await acquireEndpointLease(redis, keys, endpointKey, { id: 'lease-3', ttlMs: 10_000, limit: 1 })).verdict).toBe('open');
});

it('counts the Open API rate limit on the cluster (rate-limiter-flexible on an ioredis Cluster)', async () => {
  const limiter = new OpenApiRateLimiter(configApi.app.get<RedisClient>(REDIS), configApi.app.get(RedisKeys), {
    ...configApi.environment,
    openApi: { ...configApi.environment.openApi, rateLimitPerMinute: 2 },
  });
  const accountId = 900_000 + Math.floor(Math.random() * 1000);
  const limited: number[] = [];
  await limiter.consume(accountId, ({ retryAfterSeconds }) => limited.push(retryAfterSeconds));
  await limiter.consume(accountId, ({ retryAfterSeconds }) => limited.push(retryAfterSeconds));
  await expect(limiter.consume(accountId, ({ retryAfterSeconds }) => limited.push(retryAfterSeconds))).rejects.toMatchObject({ status: 429 });
  expect(limited).toHaveLength(1);
  expect(limited[0]).toBeGreaterThan(0);
});
