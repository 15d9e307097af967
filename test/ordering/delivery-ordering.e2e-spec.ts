import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { publishSettingsChanged, REDIS, RedisKeys } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { updatePrimaryDestination } from '../support/model-deliveries';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { eventRows, type NewTestEvent, sendEvents, spawnWorker, useOwnRedisPrefix, type WorkerProcess } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('delivery-ordering');
const KEYS = new RedisKeys(PREFIX);
// Worker processes (ts-node) start here, and a killed worker's jobs wait for their lock to lapse.
jest.setTimeout(150_000);

const SUBJECTS = 10;
const PER_SUBJECT = 12;
const WORKER_SETTINGS = {
  WORKER_CONCURRENCY: '8',
  ENDPOINT_CONCURRENCY: '8',
  DELIVERY_TIMEOUT_MS: '1000',
  RETRY_SCHEDULE: Array.from({ length: 10 }, () => '200ms').join(','),
  RECONCILE_INTERVAL: '1s',
};

/** CONTRACT §9 ordering "subject": one call at a time per subject, in accepted order, across workers and crashes. */
describe('ordering by subject', () => {
  let configApi: RunningApp;
  const workers: WorkerProcess[] = [];
  const receiver = new TestReceiver();
  let calls = 0;
  /** Which calls the receiver fails (500), by their number since the last reset. */
  let fails = (call: number): boolean => call % 10 === 1 || call % 10 === 4 || call % 10 === 7;

  beforeAll(async () => {
    await receiver.start();
    // Three calls in ten fail (500), whatever the event, unless a test says otherwise; every answer takes 20 ms.
    receiver.respondWith(async (_request, response) => {
      calls += 1;
      const failing = fails(calls);
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.writeHead(failing ? 500 : 200).end(failing ? 'broken' : 'ok');
    });
    configApi = await startApp(ConfigApiModule);
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    await configApi?.close();
    await receiver.stop();
  });

  function startWorker(extra: Record<string, string> = {}): WorkerProcess {
    const started = spawnWorker({ ...WORKER_SETTINGS, ...extra });
    workers.push(started);
    return started;
  }

  async function orderedAccount(): Promise<number> {
    const account = await createAccount(configApi);
    await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    // The delivery option written as the settings code writes it: the primary destination's row, its version, a notice.
    await updatePrimaryDestination(configApi.app.get(DataSource), account.id, { ordering: 'subject' }, { bumpVersion: true });
    await publishSettingsChanged(configApi.app.get<Redis>(REDIS), KEYS, account.id);
    return account.id;
  }

  it('never lets a later event of a subject reach the receiver before an earlier one, with 30 % failed calls, two workers and one SIGKILLed', async () => {
    const accountId = await orderedAccount();

    // Interleaved subjects (customer ids), accepted in this order.
    const events: NewTestEvent[] = Array.from({ length: SUBJECTS * PER_SUBJECT }, (_, index) => ({
      action: 'Customer_update',
      message: { ...structuredClone(SAMPLE_MESSAGES.Customer_update), id: (index % SUBJECTS) + 1 },
    }));
    const first = startWorker();
    const second = startWorker();
    await Promise.all([first.started, second.started]);
    const stored = await sendEvents(configApi.app, accountId, events);
    const place = new Map(stored.map((event, index) => [event.eventId, { subject: (index % SUBJECTS) + 1, order: Math.floor(index / SUBJECTS) }]));

    await waitFor('the run to be under way', () => receiver.requests.length >= 30, { timeoutMs: 60_000 });
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    await waitFor(
      'every event to reach a final status',
      async () => (await eventRows(configApi.app, stored.map((event) => event.eventId))).every((row) => row.status === 'delivered' || row.status === 'failed'),
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const rows = await eventRows(configApi.app, stored.map((event) => event.eventId));
    expect(rows.every((row) => row.status === 'delivered')).toBe(true);
    // Some calls failed and were retried while later events of their subject waited.
    expect(rows.some((row) => row.attempts > 1)).toBe(true);

    // Per subject, the calls the receiver saw (failed ones and repeats included) never go back in order.
    const lastSeen = new Map<number, number>();
    for (const request of receiver.requests) {
      const seen = place.get(String(request.headers['webhook-id']));
      expect(seen).toBeDefined();
      if (!seen) continue;
      expect(seen.order).toBeGreaterThanOrEqual(lastSeen.get(seen.subject) ?? 0);
      lastSeen.set(seen.subject, seen.order);
    }
    expect([...lastSeen.values()]).toEqual(Array.from({ length: SUBJECTS }, () => PER_SUBJECT - 1));
  });

  it('releases a held event when the event ahead of it ends, with no timed re-check to fall back on', async () => {
    // Only workers whose held events would look again after an hour: a chain that completes was released.
    for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    const accountId = await orderedAccount();
    const first = startWorker({ ORDERING_RECHECK: '1h' });
    const second = startWorker({ ORDERING_RECHECK: '1h' });
    await Promise.all([first.started, second.started]);
    receiver.requests.length = 0;
    // The chain's first call fails, so the second event is held while the first waits for its retry.
    calls = 0;
    fails = (call) => call === 1;

    const chain: NewTestEvent[] = Array.from({ length: 5 }, () => ({
      action: 'Customer_update',
      message: { ...structuredClone(SAMPLE_MESSAGES.Customer_update), id: 4242 },
    }));
    const stored = await sendEvents(configApi.app, accountId, chain);
    const ids = stored.map((event) => event.eventId);

    await waitFor('the chain of five events to be delivered', async () => (await eventRows(configApi.app, ids)).every((row) => row.status === 'delivered'), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const rows = await eventRows(configApi.app, ids);
    expect(rows.map((row) => row.attempts)).toEqual([2, 1, 1, 1, 1]);
    // The receiver saw the chain in accepted order, the first event twice (its failed call, then its retry).
    expect(receiver.requests.map((request) => ids.indexOf(String(request.headers['webhook-id'])))).toEqual([0, 0, 1, 2, 3, 4]);
  });
});
