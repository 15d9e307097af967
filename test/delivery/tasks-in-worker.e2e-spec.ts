import { isDeepStrictEqual } from 'node:util';
import { Queue } from 'bullmq';
import { createRedisConnection, closeRedisConnection, loadEnvironment, RedisKeys, shardOfAccount, TASK_QUEUE, type RedisClient } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { TASK_POLL_MS, TASK_STALE_AFTER_S } from '../../apps/delivery-worker/src/tasks/leased-task-runner';
import { adminCall, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { insertEventsWithPrimary } from '../support/model-deliveries';
import { startTaskWorker } from '../support/task-worker';
import { waitFor } from '@app/testing';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

/**
 * Background tasks (bulk redelivery, erasure, offboarding, redaction) run only in delivery workers:
 * config-api records a row and adds an ids-only job, and never works on a task itself. Own database and
 * Redis prefix, so no worker of another suite takes these tasks.
 */
// Shards of their own: a worker is started that takes no job of one account's shard.
const namespace = new IsolatedNamespace('tasks-in-worker', { DELIVERY_QUEUE_SHARDS: '8' });
let configApi: RunningApp;
let redis: RedisClient;
let tasksQueue: Queue;

jest.setTimeout(180_000);

beforeAll(async () => {
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  const environment = loadEnvironment({ ...process.env, ...namespace.overrides });
  redis = createRedisConnection(environment, 'blocking', 'tasks-in-worker-test');
  tasksQueue = new Queue(TASK_QUEUE, { connection: redis, prefix: RedisKeys.of(environment).taskQueuePrefix() });
});

afterAll(async () => {
  await tasksQueue?.close();
  if (redis) await closeRedisConnection(redis);
  await configApi?.close();
  await namespace.tearDown();
});

let seeded = 0;
async function seedFailed(accountId: number, count: number, message: (index: number) => unknown = (index) => ({ id: index })) {
  seeded += 1;
  const batch = seeded;
  return insertEventsWithPrimary(
    namespace.db,
    accountId,
    Array.from({ length: count }, (_, index) => ({ eventId: `tiw-${batch}-${index}`, action: 'Customer_update', message: message(index) })),
    { status: 'failed', attempts: 1 },
  );
}

async function seriesOf(accountId: number): Promise<Array<{ series: number; n: number }>> {
  const { rows } = await namespace.db.query<{ series: number; n: number }>(
    `SELECT series, count(*)::int AS n FROM deliveries WHERE account_id = $1 AND destination_id = 'primary' GROUP BY series ORDER BY series`,
    [accountId],
  );
  return rows;
}

async function redeliveryTask(id: string): Promise<Json> {
  return (await adminCall(configApi, 'GET', `/admin/v1/redeliveries/${id}`)).body;
}

describe('tasks recorded by config-api', () => {
  it('are never worked on by config-api alone, and are done once a worker starts', async () => {
    const account = await createAccount(configApi);
    const leaving = await createAccount(configApi);
    const redacting = await createAccount(configApi);
    await seedFailed(account.id, 1500);
    const [subject] = await seedFailed(account.id, 1, () => ({ id: 4711, cellphone: '13800000000' }));
    await seedFailed(leaving.id, 3);
    const [ended] = await seedFailed(redacting.id, 1, () => ({ id: 5, cellphone: '13900000000' }));
    const messageOf = async (seq: string): Promise<unknown> => (await namespace.db.query<{ message: unknown }>(`SELECT message FROM events WHERE seq = $1`, [seq])).rows[0].message;

    const redelivery = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed' });
    expect(redelivery.body).toEqual({ count: 1501, task_id: expect.any(String) });
    const erasure = await adminCall(configApi, 'POST', '/admin/v1/erasures', { subject: 'customer:4711', account_id: account.id });
    expect(erasure.status).toBe(202);
    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${leaving.id}`)).status).toBe(202);
    expect((await adminCall(configApi, 'PUT', `/admin/v1/accounts/${redacting.id}/redaction`, { fields: ['cellphone'] })).status).toBe(200);

    // Each recorded task is an ids-only job waiting for a worker.
    const jobs = await tasksQueue.getJobs(['waiting']);
    expect(jobs.map((job) => job.data as unknown).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { kind: 'account-deletion', id: String(leaving.id) },
      { kind: 'erasure', id: erasure.body.id },
      { kind: 'redaction', id: String(redacting.id) },
      { kind: 'redelivery', id: redelivery.body.task_id },
    ]);

    // Longer than a runner's poll and the redaction pass: had config-api any runner, it would have started.
    await new Promise((resolve) => setTimeout(resolve, TASK_POLL_MS + 1000));
    expect(await redeliveryTask(redelivery.body.task_id as string)).toMatchObject({ status: 'running', done: 0 });
    expect((await adminCall(configApi, 'GET', `/admin/v1/erasures/${erasure.body.id as string}`)).body).toEqual({ id: erasure.body.id, status: 'running', events_erased: 0 });
    const { rows: unclaimed } = await namespace.db.query(
      `SELECT 'redelivery' AS kind FROM redelivery_tasks WHERE id = $1 AND lease_owner IS NULL AND heartbeat_at IS NULL
       UNION ALL SELECT 'erasure' FROM erasure_tasks WHERE id = $2 AND lease_owner IS NULL AND heartbeat_at IS NULL
       UNION ALL SELECT 'deletion' FROM account_deletions WHERE id = $3 AND lease_owner IS NULL AND heartbeat_at IS NULL AND events_deleted = 0`,
      [redelivery.body.task_id, erasure.body.id, leaving.id],
    );
    expect(unclaimed).toHaveLength(3);
    expect(await seriesOf(account.id)).toEqual([{ series: 0, n: 1501 }]);
    const { rows: messages } = await namespace.db.query<{ message: Json; erased: boolean }>(`SELECT message, erased FROM events WHERE seq = $1`, [subject.seq]);
    expect(messages).toEqual([{ message: { id: 4711, cellphone: '13800000000' }, erased: false }]);
    expect(await messageOf(ended.seq)).toEqual({ id: 5, cellphone: '13900000000' });

    // A short call time-out: the erasure's second pass is due 2 s after its first.
    const worker = await startTaskWorker({ ...namespace.overrides, DELIVERY_TIMEOUT_MS: '2000' });
    try {
      const final = await waitFor('the redelivery to be done', async () => {
        const task = await redeliveryTask(redelivery.body.task_id as string);
        return task.status === 'done' ? task : undefined;
      });
      expect(final).toMatchObject({ total: 1501, done: 1501, error: null });
      expect(await seriesOf(account.id)).toEqual([{ series: 1, n: 1501 }]);
      await waitFor('the erasure to be done', async () => (await adminCall(configApi, 'GET', `/admin/v1/erasures/${erasure.body.id as string}`)).body.status === 'done', { timeoutMs: 30_000 });
      expect((await namespace.db.query(`SELECT message, erased FROM events WHERE seq = $1`, [subject.seq])).rows).toEqual([{ message: null, erased: true }]);
      await waitFor('the account deletion to be done', async () => {
        const { rows } = await namespace.db.query<{ status: string }>(`SELECT status FROM account_deletions WHERE id = $1`, [leaving.id]);
        return rows[0]?.status === 'done';
      });
      expect((await namespace.db.query(`SELECT count(*)::int AS n FROM events WHERE account_id = $1`, [leaving.id])).rows).toEqual([{ n: 0 }]);
      await waitFor('the ended event to be redacted', async () => isDeepStrictEqual(await messageOf(ended.seq), { id: 5, cellphone: '[redacted]' }));
      expect(await tasksQueue.getJobCounts('waiting', 'active')).toMatchObject({ waiting: 0, active: 0 });
    } finally {
      await worker.close();
    }
  });
});

describe('a worker killed in the middle of a task', () => {
  let killed: WorkerProcess | undefined;
  afterAll(() => {
    killed?.child.kill('SIGKILL');
  });

  it('is resumed by another worker, and every delivery is restarted exactly once', async () => {
    const account = await createAccount(configApi);
    await seedFailed(account.id, 1200);
    // The first worker takes no job of the account's shard, so the re-queue bound (REQUEUE_MAX_WAITING)
    // stops the task part of the way through, with its lease held.
    const shards = loadEnvironment({ ...process.env, ...namespace.overrides }).queueShards;
    const own = shardOfAccount(account.id, shards.count);
    const others = shards.consumed.filter((shard) => shard !== own);
    const settings = { ...namespace.overrides, REQUEUE_MAX_WAITING: '300', RECONCILE_INTERVAL: '1h' };
    killed = spawnWorker({ ...settings, WORKER_QUEUE_SHARDS: others.join(',') });
    await killed.started;

    const started = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/redeliver`, { status: 'failed' });
    expect(started.body).toEqual({ count: 1200, task_id: expect.any(String) });
    const taskId = started.body.task_id as string;
    const progressOf = async (): Promise<{ done: number; lease_owner: string | null }> =>
      (await namespace.db.query<{ done: number; lease_owner: string | null }>(`SELECT done, lease_owner FROM redelivery_tasks WHERE id = $1`, [taskId])).rows[0];
    await waitFor('the first worker to re-queue up to the bound', async () => (await progressOf()).done >= 300, { timeoutMs: 30_000 });
    // The task waits for the queue to take the account's jobs, which this worker never does.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const stalled = await progressOf();
    expect(stalled.done).toBeGreaterThanOrEqual(300);
    expect(stalled.done).toBeLessThan(1200);
    expect(stalled.lease_owner).toContain(`:${killed.child.pid ?? 'none'}:`);
    expect(await seriesOf(account.id)).toEqual([
      { series: 0, n: 1200 - stalled.done },
      { series: 1, n: stalled.done },
    ]);

    killed.child.kill('SIGKILL');
    expect(await killed.exited).toBe('SIGKILL');
    // Its lease is still held, its heartbeat fresh: another worker takes the task once that is TASK_STALE_AFTER_S old.
    const second = await startApp(DeliveryWorkerModule, { ...settings, LOG_LEVEL: 'warn' });
    try {
      const final = await waitFor('the second worker to finish the task', async () => {
        const task = await redeliveryTask(taskId);
        return task.status === 'done' ? task : undefined;
      }, { timeoutMs: (TASK_STALE_AFTER_S * 1000 + TASK_POLL_MS) * 2 });
      expect(final).toMatchObject({ total: 1200, done: 1200, error: null });
      const { rows } = await namespace.db.query<{ lease_owner: string }>(`SELECT lease_owner FROM redelivery_tasks WHERE id = $1`, [taskId]);
      expect(rows[0].lease_owner).toContain(`:${process.pid}:`);
      // Exactly once: a chunk applied twice would have started a second series of its deliveries.
      expect(await seriesOf(account.id)).toEqual([{ series: 1, n: 1200 }]);
    } finally {
      await second.close();
    }
  });
});
