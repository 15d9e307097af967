import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { useApps } from '../support/apps';
import { accountPushingTo } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import {
  customerEvents,
  deliveryQueueOf,
  enqueueFirstAttempts,
  eventRows,
  insertEvents,
  sendEvents,
  type StoredTestEvent,
} from '../support/worker-process';

/*
 * Own database and Redis prefix: a worker started on the run's shared database first works through what
 * the suites before it left there (fresh deliveries to re-add, held ones, redaction passes), and the
 * 20,000-event inserts below then ran past the statement time-out in whole-suite runs, never alone.
 */
const namespace = new IsolatedNamespace('delivery-fairness');
jest.setTimeout(180_000);

const FLOOD = 20_000;
const QUIET_ACCOUNTS = 8;

/**
 * CONTRACT §5 "accounts are served fairly": while one account has a backlog of 20,000 events on a slow
 * receiver, other accounts' events are called as if it were not there. Asserted as an outcome: when the
 * quiet accounts' events are all delivered, the flood has been worked through only a little.
 */
describe('fair turns between accounts', () => {
  const slow = new TestReceiver();
  const quick = new TestReceiver();

  beforeAll(async () => {
    await slow.start();
    // 40 ms per callback, four at a time: at most about 100 calls a second for the flood.
    slow.respondWith((_request, response) => {
      setTimeout(() => response.writeHead(200).end('ok'), 40);
    });
    await quick.start();
  });
  const { configApi, worker } = useApps(
    { configApi: ConfigApiModule, worker: [DeliveryWorkerModule, { WORKER_CONCURRENCY: '20', ENDPOINT_CONCURRENCY: '4', DELIVERY_TIMEOUT_MS: '10000' }] },
    { namespace },
  );
  afterAll(async () => {
    await slow.stop();
    await quick.stop();
  });

  const accountOn = async (target: TestReceiver): Promise<number> => (await accountPushingTo(configApi, worker.app, target)).id;

  it("delivers other accounts' events while one account's 20,000-event backlog is mostly still waiting", async () => {
    const flooding = await accountOn(slow);
    const quiet = await Promise.all(Array.from({ length: QUIET_ACCOUNTS }, () => accountOn(quick)));

    const flood = await insertEvents(worker.app, flooding, customerEvents(FLOOD));
    await enqueueFirstAttempts(deliveryQueueOf(worker.app), flood);
    await waitFor('the flood to be under way', () => slow.requests.length >= 50, { timeoutMs: 60_000 });
    // The lane gauges (fixed labels only) see the backlog. A scrape whose reading takes longer than a
    // second keeps the gauges' last value (0 on a fresh worker), as it does on a slow day: scrape again
    // until a reading landed.
    const gauges = async (): Promise<(name: string) => number> => {
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      return (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    };
    const gauge = await waitFor('a lane reading to land in the gauges', async () => {
      const read = await gauges();
      return read('callback_lanes_waiting') >= 1 ? read : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    expect(gauge('callback_lanes_waiting')).toBeGreaterThanOrEqual(1);
    expect(gauge('callback_lane_events_waiting')).toBeGreaterThan(FLOOD / 2);
    expect(gauge('callback_lane_oldest_wait_seconds')).toBeGreaterThan(0);

    const quietEvents: StoredTestEvent[] = (await Promise.all(quiet.map((accountId) => sendEvents(worker.app, accountId, customerEvents(3))))).flat();
    await waitFor(
      "every quiet account's events to be delivered",
      async () => (await eventRows(worker.app, quietEvents.map((event) => event.eventId))).every((row) => row.status === 'delivered'),
      { timeoutMs: 120_000 },
    );
    const floodCalled = new Set(slow.requests.map((request) => request.headers['webhook-id'])).size;
    // Far below the backlog: the quiet accounts did not wait for it (FIFO needed most of it worked through).
    expect(floodCalled).toBeLessThan(FLOOD / 10);
    expect(new Set(quick.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(quietEvents.map((event) => event.eventId)));
  });
});
