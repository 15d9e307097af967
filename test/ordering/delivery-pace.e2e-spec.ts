import type Redis from 'ioredis';
import { endpointKeyOf, readEndpointPace, REDIS, RedisKeys } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, pacedAccount } from '../support/fixtures';
import { TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { customerEvents, eventRows, sendEvents, type StoredTestEvent, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('delivery-pace');
const KEYS = new RedisKeys(PREFIX);
jest.setTimeout(120_000);

/** CONTRACT §9: max_per_second across all workers, and the slower pace a 429/503 imposes. */
describe('endpoint pace', () => {
  let configApi: RunningApp;
  const workers: RunningApp[] = [];
  const receiver = useReceivers();

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    // Two workers: the pace holds across processes, not per process.
    for (let index = 0; index < 2; index += 1) {
      workers.push(await startApp(DeliveryWorkerModule, { WORKER_CONCURRENCY: '20', ENDPOINT_CONCURRENCY: '10', RETRY_SCHEDULE: '1s,1s,1s' }));
    }
  });

  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await configApi?.close();
  });


  async function accountOn(target: TestReceiver, maxPerSecond: number | null): Promise<number> {
    return pacedAccount(configApi, workers[0].app, target.url, maxPerSecond);
  }

  async function allDelivered(stored: StoredTestEvent[]): Promise<boolean> {
    return (await eventRows(workers[0].app, stored.map((event) => event.eventId))).every((row) => row.status === 'delivered');
  }

  it('starts at most max_per_second calls (over any 10 s window at most 5 % more) across two workers, spending no attempt on waiting', async () => {
    const target = await receiver();
    const accountId = await accountOn(target, 20);
    const stored = await sendEvents(workers[0].app, accountId, customerEvents(260));
    await waitFor('every paced event to be delivered', () => allDelivered(stored), { timeoutMs: 90_000 });

    const arrivals = target.requests.map((request) => request.receivedAt).sort((a, b) => a - b);
    let busiestWindow = 0;
    for (let from = 0; from < arrivals.length; from += 1) {
      let to = from;
      while (to < arrivals.length && arrivals[to] < arrivals[from] + 10_000) to += 1;
      busiestWindow = Math.max(busiestWindow, to - from);
    }
    expect(busiestWindow).toBeLessThanOrEqual(210);
    // 260 calls at 20 a second take at least 12.9 s.
    expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThanOrEqual(12_800);
    for (const row of await eventRows(workers[0].app, stored.map((event) => event.eventId))) expect(row.attempts).toBe(1);
    // Both workers made calls.
    expect(new Set(target.requests.map((request) => request.headers['webhook-id'])).size).toBe(260);
  });

  it('holds the endpoint for a 429 Retry-After and slows it down; the 429 attempt counts as failed, the waiting ones as nothing', async () => {
    const target = await receiver();
    let throttled = false;
    target.respondWith((_request, response) => {
      if (!throttled) {
        throttled = true;
        response.writeHead(429, { 'retry-after': '2' }).end('slow down');
      } else response.writeHead(200).end('ok');
    });
    const accountId = await accountOn(target, null);
    const [first] = await sendEvents(workers[0].app, accountId, customerEvents(1));
    await waitFor('the 429 to be recorded', async () => (await eventRows(workers[0].app, [first.eventId]))[0].attempts === 1);
    const throttledAt = target.requests[0].receivedAt;

    const later = await sendEvents(workers[0].app, accountId, customerEvents(5));
    await waitFor('every event to be delivered', () => allDelivered([first, ...later]), { timeoutMs: 30_000 });
    // No call reached the receiver during its Retry-After.
    for (const request of target.requests.slice(1)) expect(request.receivedAt).toBeGreaterThanOrEqual(throttledAt + 2000);
    const rows = await eventRows(workers[0].app, [first, ...later].map((event) => event.eventId));
    expect(rows[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    for (const row of rows.slice(1)) expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
    // The pace came down from the unpaced start (100 a second) and is recovering additively.
    const pace = await readEndpointPace(workers[0].app.get<Redis>(REDIS), KEYS, endpointKeyOf(accountId, target.url), null);
    expect(pace).not.toBeNull();
    expect(pace ?? 0).toBeGreaterThanOrEqual(50);
    expect(pace ?? 100).toBeLessThan(60);
    // Operators see the same pace, and no waiting event, in the account view: a job leaves the queue just
    // after its outcome commits, which is what the wait above saw.
    const lane = await waitFor('the account view to show no waiting event', async () => {
      const view = (await (await fetch(`${configApi.url}/admin/v1/accounts/${accountId}`, { headers: ADMIN_HEADERS })).json()) as { lane: { waiting: number } };
      return view.lane.waiting === 0 ? view.lane : undefined;
    });
    expect(lane).toEqual({ waiting: 0, pace_per_second: pace });
  });
});
