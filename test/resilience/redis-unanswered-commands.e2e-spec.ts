import Redis from 'ioredis';
import { createRedisConnection, DeliveryQueues, firstDeliveryStep, loadEnvironment } from '@app/runtime';
import { waitFor } from '@app/testing';
import { RedisInstance } from './redis-instance';

/**
 * A fail-fast connection (ingest's job adds, rate limits) never runs a command later behind its caller's
 * back: a command Redis had not answered when it went away fails, and the Redis that comes back on the
 * same address never receives it. A job add re-sent that way reached a Redis restarted empty while a worker
 * still held the job taken before the restart (drill 8 saw the event called twice).
 */
jest.setTimeout(60_000);

let redis: RedisInstance;
const closing: Array<() => Promise<unknown> | void> = [];

beforeAll(async () => {
  redis = await RedisInstance.create();
});

afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

afterAll(async () => {
  await redis.stop();
});

/** Holds the server busy for `ms` in a script, so whatever is sent meanwhile waits unanswered. */
function stall(ms: number): void {
  const blocker = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  blocker.on('error', () => undefined);
  closing.push(() => blocker.disconnect());
  const spin = `local deadline = tonumber(redis.call('TIME')[1]) * 1000 + tonumber(redis.call('TIME')[2]) / 1000 + ${ms}
    while tonumber(redis.call('TIME')[1]) * 1000 + tonumber(redis.call('TIME')[2]) / 1000 < deadline do end
    return 1`;
  void blocker.eval(spin, 0).catch(() => undefined);
}

/** Restarts Redis empty while the commands sent during a stall are still unanswered, and waits for `client` to be back. */
async function restartWhileUnanswered(client: { status: string }): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  await redis.stop();
  await redis.start();
  await waitFor('the connection back', () => client.status === 'ready', { timeoutMs: 20_000 });
  // Long enough for a re-sent command to have arrived and run.
  await new Promise((resolve) => setTimeout(resolve, 500));
}

function environment() {
  return loadEnvironment({ ...process.env, REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '', REDIS_SENTINELS: '', DELIVERY_QUEUE_SHARDS: '1' });
}

it('fails a command left unanswered by a restart and never sends it to the new server', async () => {
  const client = createRedisConnection(environment(), 'command', 'spec');
  closing.push(() => client.disconnect());
  await waitFor('the connection', () => client.status === 'ready');
  stall(1_500);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const counted = client.incr('unanswered-counter').then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );
  await restartWhileUnanswered(client);

  expect(await counted).toEqual({ error: 'the connection to Redis dropped before it answered; the command is not sent again' });
  expect(await client.exists('unanswered-counter')).toBe(0);
  expect(await client.incr('unanswered-counter')).toBe(1);
});

it("does not add, to a Redis restarted empty, a producer's job add that the old one left unanswered", async () => {
  const queues = DeliveryQueues.open(environment(), 'producer');
  closing.push(() => queues.close());
  await queues.ready(10_000);
  const queue = queues.all()[0];
  const client = await queue.client;
  stall(1_500);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const adding = queues.addBulk([firstDeliveryStep('123', 7)]).then(
    () => 'added',
    () => 'failed',
  );
  await restartWhileUnanswered(client);

  expect(await adding).toBe('failed');
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active');
  expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(0);
  expect(await redis.keyCount()).toBe(0);
});
