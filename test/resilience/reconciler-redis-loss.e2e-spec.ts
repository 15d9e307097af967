import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { Reconciler } from '../../apps/delivery-worker/src/delivery/reconciler.service';
import { RedisKeys } from '@app/runtime';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import { customerEvents, eventRows, insertEvents, type StoredTestEvent, useOwnRedisPrefix } from '../support/worker-process';

const prefix = useOwnRedisPrefix('reconciler-redis-loss');
jest.setTimeout(90_000);

/**
 * A worker that finds Redis emptied (its contents mark gone) does not re-enqueue stored events at
 * once: jobs taken before the loss may still be in a worker's hands, and a second job of the same step
 * would call the endpoint again. It re-enqueues them once those jobs' locks would have lapsed.
 */
describe('reconciler after Redis lost its contents', () => {
  let configApi: RunningApp;
  let worker: RunningApp;
  let reconciler: Reconciler;
  let accountId: number;
  const receiver = new TestReceiver();
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });

  /**
   * Stored events with no job, due long before the reconciler's grace period (RECONCILE_INTERVAL is long
   * here): each delivery's open row says when it fell due (what finds a delivery whose job was lost).
   */
  async function overdueWithoutJob(count: number): Promise<StoredTestEvent[]> {
    const stored = await insertEvents(configApi.app, accountId, customerEvents(count));
    await configApi.app.get(DataSource).query(
      `INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at)
       SELECT d.event_seq, d.destination_id, d.account_id, now() - interval '3 hours' FROM deliveries d
        WHERE d.event_seq = ANY($1::bigint[]) AND d.destination_id = 'primary' AND d.status = 'queued'
       ON CONFLICT (event_seq, destination_id) DO UPDATE SET due_at = excluded.due_at`,
      [stored.map((event) => event.seq)],
    );
    return stored;
  }

  const received = (events: StoredTestEvent[]): number => receiver.requests.filter((request) => events.some((event) => event.eventId === request.headers['webhook-id'])).length;

  beforeAll(async () => {
    await receiver.start();
    await redis.connect();
    configApi = await startApp(ConfigApiModule);
    accountId = (await createAccount(configApi)).id;
    await setCallbackSettings(configApi.app, accountId, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    // The runner's own reconciling runs once at start, then not again within the test: the test runs it.
    // The receiver answers from this (busy) process: a late answer would be a time-out and a second call,
    // which the counts below would take for a duplicate. The deadline also sets the lock (deadline + 10 s).
    worker = await startApp(DeliveryWorkerModule, { RECONCILE_INTERVAL: '1h', DELIVERY_TIMEOUT_MS: '5000' });
    reconciler = worker.app.get(Reconciler, { strict: false });
  });

  afterAll(async () => {
    await worker?.close();
    await configApi?.close();
    await receiver.stop();
    redis.disconnect();
  });

  it('re-enqueues at once while Redis kept its contents', async () => {
    await reconciler.reconcileOnce();
    const events = await overdueWithoutJob(2);
    expect(await reconciler.reconcileOnce()).toBe(2);
    await waitFor('both events to be delivered', async () => (await eventRows(configApi.app, events.map((event) => event.eventId))).every((row) => row.status === 'delivered'));
    expect(received(events)).toBe(2);
  });

  it('waits for the jobs taken before the loss (their lock duration), then re-enqueues', async () => {
    const events = await overdueWithoutJob(3);
    await redis.del(new RedisKeys(prefix).contentsMark());

    expect(await reconciler.reconcileOnce()).toBe(0);
    expect((await eventRows(configApi.app, events.map((event) => event.eventId))).map((row) => row.status)).toEqual(['queued', 'queued', 'queued']);

    await waitFor('the reconciler to re-enqueue the stored events', async () => (await reconciler.reconcileOnce()) === 3, { timeoutMs: 60_000, intervalMs: 500 });
    await waitFor('the events to be delivered', async () => (await eventRows(configApi.app, events.map((event) => event.eventId))).every((row) => row.status === 'delivered'));
    expect(received(events)).toBe(3);
  });

  it('holds its adds when Redis loses its contents in the middle of a run, after the run first looked', async () => {
    const events = await overdueWithoutJob(2);
    const database = configApi.app.get(DataSource);
    const locker = database.createQueryRunner();
    await locker.connect();
    await locker.startTransaction();
    let run: Promise<number> | undefined;
    try {
      // The run looks at Redis (contents as before), then its claim waits here while Redis loses them.
      await locker.query('LOCK TABLE open_deliveries IN ACCESS EXCLUSIVE MODE');
      run = reconciler.reconcileOnce();
      await waitFor('the run to wait for the lock', async () => {
        const [{ waiting }] = await database.query<{ waiting: number }[]>(`SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = 'open_deliveries'::regclass`);
        return waiting > 0;
      });
      await redis.del(new RedisKeys(prefix).contentsMark());
    } finally {
      await locker.commitTransaction();
      await locker.release();
    }
    expect(await run).toBe(0);
    expect((await eventRows(configApi.app, events.map((event) => event.eventId))).map((row) => row.status)).toEqual(['queued', 'queued']);
    expect(received(events)).toBe(0);
  });
});
