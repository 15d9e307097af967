import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { deliveryJobsWithoutCall } from '../apps/delivery-worker/src/delivery/delivery.metrics';
import { type RunningApp, startApp } from './support/apps';
import { createAccount, setCallbackSettings } from './support/fixtures';
import { TestReceiver } from './support/receiver';
import { waitFor } from './support/wait-for';
import { customerEvents, eventRows, sendEvents, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('delivery-burst');
jest.setTimeout(90_000);

const EVENTS = 200;

async function putBackBusy(): Promise<number> {
  const metric = await deliveryJobsWithoutCall.get();
  return metric.values.find((value) => value.labels.reason === 'busy')?.value ?? 0;
}

/**
 * A burst to one endpoint waits in the worker for the endpoint's own leases (docs/lanes.md) instead of
 * going back through Redis's delayed set: the jobs a shard's worker holds (4 per WORKER_CONCURRENCY)
 * outnumber the endpoint's share many times, and each job still waiting there is one that was not put
 * back and taken again.
 */
describe('a burst of events to one endpoint', () => {
  let configApi: RunningApp;
  let worker: RunningApp;
  const receiver = new TestReceiver();

  beforeAll(async () => {
    await receiver.start();
    // A receiver that takes a moment, so the burst's jobs pile up behind the endpoint's four slots.
    receiver.respondWith((_request, response) => void setTimeout(() => response.writeHead(200).end('ok'), 30));
    configApi = await startApp(ConfigApiModule);
    worker = await startApp(DeliveryWorkerModule, { WORKER_CONCURRENCY: '8', ENDPOINT_CONCURRENCY: '4', DELIVERY_QUEUE_SHARDS: '1' });
  });

  afterAll(async () => {
    await worker?.close();
    await configApi?.close();
    await receiver.stop();
  });

  it('waits in the worker for the endpoint leases: few jobs put back for a full endpoint', async () => {
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    const before = await putBackBusy();

    const stored = await sendEvents(worker.app, account.id, customerEvents(EVENTS));
    await waitFor('every event of the burst to be delivered', async () =>
      (await eventRows(worker.app, stored.map((event) => event.eventId))).every((row) => row.status === 'delivered'),
    );

    expect(new Set(receiver.requests.map((request) => String(request.headers['webhook-id'])))).toEqual(new Set(stored.map((event) => event.eventId)));
    // 32 jobs in hand for 4 slots. Measured: 11–28 put back; 172 when every job of the burst asked Redis at once
    // (all but four refused, and sent back while none of the four leases had come back yet), 188 with the waiters capped at WORKER_CONCURRENCY.
    expect((await putBackBusy()) - before).toBeLessThanOrEqual(EVENTS / 4);
  });
});
