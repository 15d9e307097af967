import type { ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { useApps } from '../support/apps';
import { accountPushingTo } from '../support/fixtures';
import { primaryDestinationOf } from '../support/model-deliveries';
import { TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import { customerEvents, eventRows, sendEvents, type StoredTestEvent, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('endpoint-tenants');
const KEYS = new RedisKeys(PREFIX);
jest.setTimeout(90_000);

const events = customerEvents;

/**
 * CONTRACT §5 "Endpoints and tenants": an endpoint is one account's push URL. Two accounts whose URLs
 * are two paths on one origin (one real receiver) must not change whether or when the other's events
 * are called.
 */
describe('endpoints of two accounts on one origin', () => {
  const receiver = new TestReceiver();
  /** Answers by path, so each test gives its accounts their own behaviour on the one origin. */
  const byPath = new Map<string, (response: ServerResponse) => void>();
  const originInFlight = { now: 0, most: 0 };

  beforeAll(async () => {
    await receiver.start();
    receiver.respondWith((request, response) => {
      originInFlight.now += 1;
      originInFlight.most = Math.max(originInFlight.most, originInFlight.now);
      response.on('close', () => (originInFlight.now -= 1));
      const answer = byPath.get(request.url);
      if (answer) answer(response);
      else response.writeHead(200).end('ok');
    });
  });
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        WORKER_CONCURRENCY: '8',
        ENDPOINT_CONCURRENCY: '2',
        ORIGIN_CONCURRENCY: '3',
        // Long enough that a held call is only ever ended by the test.
        DELIVERY_TIMEOUT_MS: '60000',
        BREAKER_FAILURE_THRESHOLD: '3',
        BREAKER_COOLDOWN: '60s',
        RETRY_SCHEDULE: Array.from({ length: 6 }, () => '300ms').join(','),
        RECONCILE_INTERVAL: '1s',
      },
    ],
  });
  afterAll(async () => {
    await receiver.stop();
  });

  function urlFor(path: string): string {
    return new URL(path, receiver.url).toString();
  }

  async function accountOn(path: string): Promise<number> {
    return (await accountPushingTo(configApi, worker.app, urlFor(path))).id;
  }

  async function statuses(stored: StoredTestEvent[]): Promise<string[]> {
    return (await eventRows(worker.app, stored.map((event) => event.eventId))).map((row) => row.status);
  }

  function callsTo(path: string): string[] {
    return receiver.requests.filter((request) => request.url === path).map((request) => String(request.headers['webhook-id']));
  }

  it("calls and delivers B's events while A's URL on the same origin fails and its breaker is open", async () => {
    byPath.set('/tenant-a-failing', (response) => response.writeHead(500).end('broken'));
    const failing = await accountOn('/tenant-a-failing');
    const healthy = await accountOn('/tenant-b-healthy');
    const redis = worker.app.get<Redis>(REDIS);

    await sendEvents(worker.app, failing, events(10));
    await waitFor('the breaker of A to open', async () => (await readEndpointState(redis, KEYS, failing, urlFor('/tenant-a-failing'))).state === 'open');

    const healthyEvents = await sendEvents(worker.app, healthy, events(10));
    await waitFor("every event of B to be delivered", async () => (await statuses(healthyEvents)).every((status) => status === 'delivered'));
    // Every one of B's events was called (none recorded as skipped by A's open breaker), each on its first attempt.
    expect(new Set(callsTo('/tenant-b-healthy'))).toEqual(new Set(healthyEvents.map((event) => event.eventId)));
    for (const row of await eventRows(worker.app, healthyEvents.map((event) => event.eventId))) {
      expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
    }
    expect(await readEndpointState(redis, KEYS, healthy, urlFor('/tenant-b-healthy'))).toMatchObject({ state: 'closed', consecutive_failures: 0 });
    expect((await readEndpointState(redis, KEYS, failing, urlFor('/tenant-a-failing'))).state).toBe('open');

    // The failure clock that disables an endpoint runs for A only (on each account's primary destination).
    const dataSource = worker.app.get(DataSource);
    expect((await primaryDestinationOf(dataSource, failing))?.failing_since).toBeInstanceOf(Date);
    expect((await primaryDestinationOf(dataSource, healthy))?.failing_since).toBeNull();
  });

  it("delivers B's events while every call A may make is held unanswered by its receiver", async () => {
    const held: ServerResponse[] = [];
    byPath.set('/tenant-a-hanging', (response) => held.push(response));
    const hanging = await accountOn('/tenant-a-hanging');
    const quick = await accountOn('/tenant-b-quick');
    try {
      const hangingEvents = await sendEvents(worker.app, hanging, events(12));
      // A holds its whole share (ENDPOINT_CONCURRENCY 2) of calls before B sends anything.
      await waitFor('A to have two calls held', () => held.length >= 2);

      const quickEvents = await sendEvents(worker.app, quick, events(10));
      await waitFor("every event of B to be delivered", async () => (await statuses(quickEvents)).every((status) => status === 'delivered'));
      // Ordering, not a clock: B was served completely while A's calls were still unanswered.
      expect((await eventRows(worker.app, hangingEvents.map((event) => event.eventId))).every((row) => row.attempts === 0)).toBe(true);
      expect(held).toHaveLength(2);
      // ORIGIN_CONCURRENCY 3 held at the shared origin throughout.
      expect(originInFlight.most).toBeLessThanOrEqual(3);

      byPath.set('/tenant-a-hanging', (response) => response.writeHead(200).end('ok'));
      for (const response of held.splice(0)) response.writeHead(200).end('ok');
      await waitFor('every event of A to be delivered once it answers', async () => (await statuses(hangingEvents)).every((status) => status === 'delivered'), {
        timeoutMs: 30_000,
      });
    } finally {
      for (const response of held.splice(0)) response.destroy();
    }
  });
});
