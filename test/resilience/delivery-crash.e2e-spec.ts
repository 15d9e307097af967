import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import {
  attemptRows,
  eventRows,
  type NewTestEvent,
  sendEvents,
  spawnWorker,
  type StoredTestEvent,
  useOwnRedisPrefix,
  type WorkerProcess,
} from '../support/worker-process';

useOwnRedisPrefix('delivery-crash');
// Two real worker processes start here (ts-node), and a killed worker's jobs wait for their lock to expire.
jest.setTimeout(90_000);

/**
 * Settings shared by every worker of this file. The deadline keeps BullMQ's lock short (deadline +
 * 10 s), which is how long a SIGKILLed worker's active jobs wait before they are recovered, yet leaves
 * the receiver (this process, answering after 300-400 ms) ample time on a loaded machine: an answer
 * after the deadline would be a time-out and a second attempt.
 */
const WORKER_SETTINGS = {
  WORKER_CONCURRENCY: '4',
  ENDPOINT_CONCURRENCY: '4',
  DELIVERY_TIMEOUT_MS: '5000',
  RETRY_SCHEDULE: '200ms,200ms,200ms',
  RECONCILE_INTERVAL: '1s',
};

function events(count: number): NewTestEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    action: 'ShutQueue_create',
    message: { ...structuredClone(SAMPLE_MESSAGES.ShutQueue_create), id: `crash-${index}` },
  }));
}

describe('delivery worker process crashes and shutdowns', () => {
  let configApi: RunningApp;
  let finisher: RunningApp | undefined;
  const workers: WorkerProcess[] = [];
  const receiver = new TestReceiver();
  let accountId: number;

  /** A slow receiver: every answer takes `delayMs`, so kills and stops land mid-delivery. */
  function answerAfter(delayMs: number): void {
    receiver.respondWith(async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      response.writeHead(200).end('ok');
    });
  }

  function startWorker(): WorkerProcess {
    const started = spawnWorker(WORKER_SETTINGS);
    workers.push(started);
    return started;
  }

  async function delivered(stored: StoredTestEvent[]): Promise<boolean> {
    const rows = await eventRows(configApi.app, stored.map((event) => event.eventId));
    return rows.every((row) => row.status === 'delivered');
  }

  function receivedIds(): Set<string> {
    return new Set(receiver.requests.map((request) => String(request.headers['webhook-id'])));
  }

  beforeAll(async () => {
    await receiver.start();
    configApi = await startApp(ConfigApiModule);
    const account = await createAccount(configApi);
    accountId = account.id;
    await setCallbackSettings(configApi.app, accountId, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    await finisher?.close();
    await configApi?.close();
    await receiver.stop();
  });

  it('loses nothing when a worker is SIGKILLed mid-batch: another worker delivers every event', async () => {
    answerAfter(300);
    const first = startWorker();
    await first.started;
    // Enqueued by the config API's queue: the same queue (prefix) the worker processes consume.
    const batch = await sendEvents(configApi.app, accountId, events(30));
    await waitFor('the first worker to be mid-batch', () => receiver.requests.length >= 6, { timeoutMs: 30_000 });

    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const rows = await eventRows(configApi.app, batch.map((event) => event.eventId));
    expect(rows.some((row) => row.status === 'queued')).toBe(true);

    // Its active jobs come back once their locks lapse (stalled-job recovery); the rest were still waiting.
    const second = startWorker();
    await second.started;
    await waitFor('every event of the batch to be delivered', () => delivered(batch), { timeoutMs: 60_000, intervalMs: 200 });
    const ids = receivedIds();
    expect(batch.every((event) => ids.has(event.eventId))).toBe(true);
    for (const event of batch.slice(0, 5)) {
      expect((await attemptRows(configApi.app, event.eventId)).some((attempt) => attempt.response_status === 200)).toBe(true);
    }
  });

  it('finishes and records in-flight deliveries on SIGTERM before exiting', async () => {
    const running = workers[1];
    answerAfter(400);
    receiver.requests.length = 0;
    const batch = await sendEvents(configApi.app, accountId, events(12));
    await waitFor('deliveries in flight', () => receiver.requests.length >= 2, { timeoutMs: 30_000 });

    running.child.kill('SIGTERM');
    // Nest re-raises the signal once its shutdown hooks are done.
    expect(await running.exited).toBe('SIGTERM');
    const received = receivedIds();
    expect(received.size).toBeGreaterThanOrEqual(2);
    const rows = await eventRows(configApi.app, batch.map((event) => event.eventId));
    for (const row of rows) {
      if (received.has(row.event_id)) {
        // Every call the worker had started was answered, recorded, and completed before it exited.
        expect(row.status).toBe('delivered');
        expect(await attemptRows(configApi.app, row.event_id)).toHaveLength(1);
      } else {
        expect(row.status).toBe('queued');
      }
    }
    expect(rows.some((row) => row.status === 'queued')).toBe(true);

    answerAfter(0);
    finisher = await startApp(DeliveryWorkerModule, WORKER_SETTINGS);
    await waitFor('the remaining events to be delivered by the next worker', () => delivered(batch));
    const attempts = await Promise.all(batch.map((event) => attemptRows(configApi.app, event.eventId)));
    expect(attempts.map((rowsOfEvent) => rowsOfEvent.length)).toEqual(batch.map(() => 1));
  });
});
