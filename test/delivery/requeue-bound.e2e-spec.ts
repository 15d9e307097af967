import { DeliveryQueues } from '@app/runtime';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { adminCall } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { insertEventsWithPrimary } from '../support/model-deliveries';
import { useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { eventRows, sendEvents } from '../support/worker-process';

/*
 * CONTRACT §10, re-queuing bounded by what it feeds, at a size CI runs: a bulk redelivery of 3,000
 * delivered events to a receiver that takes 2 calls at a time and answers in 200 ms never has more than
 * REQUEUE_MAX_WAITING of its account's deliveries in the queue not yet taken, goes on as the worker takes
 * them, and another account's events are called meanwhile. Own database and Redis prefix: the queue
 * counts are this suite's alone.
 */
const namespace = new IsolatedNamespace('requeue-bound');
const BOUND = 100;
const HISTORY = 3_000;
let configApi: RunningApp;
let worker: RunningApp;
const receiver = useReceivers();

jest.setTimeout(180_000);

beforeAll(async () => {
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  worker = await startApp(DeliveryWorkerModule, { ...namespace.overrides, REQUEUE_MAX_WAITING: String(BOUND), ENDPOINT_CONCURRENCY: '2', DELIVERY_TIMEOUT_MS: '10000' });
});

afterAll(async () => {
  await worker?.close();
  await configApi?.close();
  await namespace.tearDown();
});

it("keeps a bulk redelivery's waiting jobs under REQUEUE_MAX_WAITING while another account's events are called", async () => {
  const slow = await receiver((started) =>
    started.respondWith((_request, response) => {
      setTimeout(() => response.writeHead(200).end('ok'), 200);
    }),
  );
  const quick = await receiver();
  const busy = await createAccount(configApi);
  const other = await createAccount(configApi);
  await setCallbackSettings(worker.app, busy.id, { pushUrl: slow.url, contentType: 'JSON', permissions: 'all' });
  await setCallbackSettings(worker.app, other.id, { pushUrl: quick.url, contentType: 'JSON', permissions: 'all' });
  await insertEventsWithPrimary(
    namespace.db,
    busy.id,
    Array.from({ length: HISTORY }, (_, index) => ({ eventId: `rqb-${index}`, action: 'Customer_update', message: { id: index } })),
    { status: 'delivered', attempts: 1 },
  );

  const started = await adminCall(configApi, 'POST', `/admin/v1/accounts/${busy.id}/redeliver`, { status: 'delivered' });
  expect(started.body).toEqual({ count: HISTORY, task_id: expect.any(String) });
  const taskId = started.body.task_id as string;

  const queues = worker.app.get(DeliveryQueues);
  let highest = 0;
  let sampling = true;
  const samples = (async () => {
    while (sampling) {
      highest = Math.max(highest, await queues.accountJobs(busy.id));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await waitFor('the task to re-queue up to the bound', async () => ((await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${taskId}`)).body.done as number) >= BOUND, {
      timeoutMs: 60_000,
    });
    // The other account's events go while the busy one's backlog waits.
    const events = await sendEvents(worker.app, other.id, Array.from({ length: 20 }, (_, index) => ({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id: index } })));
    await waitFor(
      "the other account's events to be delivered",
      async () => (await eventRows(worker.app, events.map((event) => event.eventId))).every((row) => row.status === 'delivered'),
      { timeoutMs: 60_000 },
    );
    // The task goes on as the worker takes jobs, never past the bound, and is far from done.
    const done = await waitFor(
      'the task to go on past its first bound',
      async () => {
        const progress = (await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${taskId}`)).body.done as number;
        return progress > BOUND * 2 ? progress : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(done).toBeLessThan(HISTORY);
  } finally {
    sampling = false;
    await samples;
  }
  expect(highest).toBeGreaterThan(0);
  expect(highest).toBeLessThanOrEqual(BOUND);
  expect(quick.requests).toHaveLength(20);
});
