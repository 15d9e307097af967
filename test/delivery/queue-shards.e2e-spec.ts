import type { Redis } from 'ioredis';
import { EVENTS_STREAM_MAX_LEN, firstDeliveryStep } from '@app/runtime';
import { useShardedQueue } from '../support/queue-shards';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { customerEvents, eventRows, sendEvents, type StoredTestEvent } from '../support/worker-process';

/**
 * WORKER_QUEUE_SHARDS: a worker consumes only the shards it names, so a deployment can split the shards
 * between worker groups; another worker consuming the rest picks up what the first one leaves.
 */
jest.setTimeout(60_000);

const { namespace, receiver, configApi, workers, startWorker } = useShardedQueue('queue-shards');

const events = customerEvents;

it('consumes only the configured shards; a second worker takes the others', async () => {
  // Two accounts whose ids fall into different shards of two (shard = id mod 2).
  const accounts: number[] = [];
  while (!(accounts.some((id) => id % 2 === 0) && accounts.some((id) => id % 2 === 1))) {
    const { id } = await createAccount(configApi);
    if (!accounts.some((known) => known % 2 === id % 2)) {
      await setCallbackSettings(configApi.app, id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
      accounts.push(id);
    }
  }
  const even = accounts.find((id) => id % 2 === 0) as number;
  const odd = accounts.find((id) => id % 2 === 1) as number;

  await startWorker('0');
  const shardZero = await sendEvents(workers[0].app, even, events(5));
  const shardOne = await sendEvents(workers[0].app, odd, events(5));
  const statuses = async (stored: StoredTestEvent[]): Promise<string[]> =>
    (await eventRows(workers[0].app, stored.map((event) => event.eventId))).map((row) => row.status);

  await waitFor('shard 0 to be delivered', async () => (await statuses(shardZero)).every((status) => status === 'delivered'));
  // Shard 1's jobs wait in their own queue: nobody consumes it yet (no BullMQ worker on it, where shard 0 has one).
  expect(await namespace.queues.all()[0].getWorkersCount()).toBeGreaterThan(0);
  expect(await namespace.queues.all()[1].getWorkersCount()).toBe(0);
  expect(await statuses(shardOne)).toEqual(['queued', 'queued', 'queued', 'queued', 'queued']);
  expect(await namespace.queues.all()[1].getWaitingCount()).toBe(5);

  await startWorker('1');
  await waitFor('shard 1 to be delivered by the second worker', async () => (await statuses(shardOne)).every((status) => status === 'delivered'));
  const delivered = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
  expect([...shardZero, ...shardOne].filter((event) => !delivered.has(event.eventId))).toEqual([]);
});

it("keeps each shard's BullMQ event stream (read by nothing) short", async () => {
  // Steps of events that do not exist: each job is added, taken and finished (stale), and every one of
  // those state changes appends to its shard's stream, three times as many entries as the cap. Accounts
  // 8 and 9 fall into shards 0 and 1 of the suite's two.
  const steps = Array.from({ length: 3 * EVENTS_STREAM_MAX_LEN * 2 }, (_, index) => firstDeliveryStep(String(9_000_000_000 + index), 8 + (index % 2)));
  await namespace.queues.addBulk(steps);
  await waitFor('every job to be taken and finished', async () => {
    const counts = await Promise.all(namespace.queues.all().map((queue) => queue.getJobCounts('wait', 'prioritized', 'active')));
    return counts.every((count) => count.wait + count.prioritized + count.active === 0);
  });
  for (const queue of namespace.queues.all().slice(0, 2)) {
    const client = (await queue.client) as unknown as Redis;
    expect(await client.hget(queue.keys.meta, 'opts.maxLenEvents')).toBe(String(EVENTS_STREAM_MAX_LEN));
    // Trimmed with `~`: whole stream nodes of 100 entries go, so a little more than the cap may stay.
    expect(await client.xlen(queue.keys.events)).toBeLessThanOrEqual(3 * EVENTS_STREAM_MAX_LEN);
  }
});
