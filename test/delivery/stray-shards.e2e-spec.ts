import { waitFor } from '@app/testing';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { useShardedQueue } from '../support/queue-shards';
import { customerEvents, enqueueFirstAttempts, eventRows, insertEvents } from '../support/worker-process';

/**
 * A deployment that ran with more queue shards than it runs with now (the default was 8 on every Redis
 * until it followed the topology) may still hold jobs past the new count: a worker that consumes every
 * shard drains them, without waiting for the reconciler (kept away here: one run an hour).
 */
jest.setTimeout(60_000);

const { namespace, receiver, configApi, workers } = useShardedQueue('stray-shards');

it('a worker of fewer shards drains the jobs left in the shards past its count', async () => {
  // An account of shard 1 of the suite's two.
  let account = 0;
  while (account % 2 !== 1) account = (await createAccount(configApi)).id;
  await setCallbackSettings(configApi.app, account, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  const stored = await insertEvents(configApi.app, account, customerEvents(5));
  await enqueueFirstAttempts(namespace.queues, stored);
  expect(await namespace.queues.all()[1].getWaitingCount()).toBe(5);

  const worker = await startApp(DeliveryWorkerModule, { ...namespace.overrides, DELIVERY_QUEUE_SHARDS: '1', RECONCILE_INTERVAL: '1h' });
  workers.push(worker);
  const ids = stored.map((event) => event.eventId);
  await waitFor('the jobs of shard 1 to be delivered by a worker of one shard', async () =>
    (await eventRows(worker.app, ids)).every((row) => row.status === 'delivered'),
  );
  const counts = await namespace.queues.all()[1].getJobCounts('wait', 'prioritized', 'delayed', 'active');
  expect(counts).toEqual({ wait: 0, prioritized: 0, delayed: 0, active: 0 });
  expect(receiver.requests.map((request) => request.headers['webhook-id']).filter((id) => ids.includes(id as string)).sort()).toEqual([...ids].sort());
});
