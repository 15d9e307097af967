import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { adminCall, expectQueryError, type Json } from '../support/admin-client';
import { useApps } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { updatePrimaryDestination } from '../support/model-deliveries';
import { TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import { enqueueFirstAttempts, insertEvents, sendEvents } from '../support/worker-process';

describe('GET /admin/v1/queue', () => {
  // Own database and queue and no worker: the jobs stay where the test put them.
  const namespace = new IsolatedNamespace('admin-queue');
  const { configApi } = useApps({ configApi: ConfigApiModule }, { namespace });

  it('counts real jobs by state over every shard and dates the oldest waiting one', async () => {
    const empty = await adminCall(configApi, 'GET', '/admin/v1/queue');
    expect(empty.body).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0, oldest_waiting_at: null, oldest_waiting_age_seconds: null });

    const accounts = await Promise.all([1, 2, 3].map(() => createAccount(configApi)));
    const before = Date.now();
    const now = await Promise.all(accounts.map((account) => insertEvents(configApi.app, account.id, [{ action: 'Customer_create', message: { id: 1 } }])));
    await enqueueFirstAttempts(namespace.queues, now.flat());
    const enqueuedBy = Date.now();
    const later = await insertEvents(configApi.app, accounts[0].id, [1, 2].map((id) => ({ action: 'Customer_create', message: { id } })));
    await enqueueFirstAttempts(namespace.queues, later, 3_600_000);

    // The oldest job's age reaches a second: read back until it does, not after a sleep of that length.
    const answer = await waitFor('the oldest waiting job to be a second old', async () => {
      const read = await adminCall(configApi, 'GET', '/admin/v1/queue');
      return (read.status !== 200 || Number(read.body.oldest_waiting_age_seconds) >= 1) && read;
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ waiting: 3, active: 0, delayed: 2, failed: 0 });
    // Dated when it was added: between the two readings of the clock around the add, whatever it took.
    const oldest = Date.parse(answer.body.oldest_waiting_at as string);
    expect(oldest).toBeGreaterThanOrEqual(before - 5);
    expect(oldest).toBeLessThanOrEqual(enqueuedBy + 5);
    expect(answer.body.oldest_waiting_age_seconds).toBeGreaterThanOrEqual(1);

    // The same reading is on /metrics.
    const metrics = await (await fetch(`${configApi.url}/metrics`)).text();
    expect(metrics).toMatch(/^delivery_queue_jobs\{state="waiting"\} 3$/m);
    expect(metrics).toMatch(/^delivery_queue_jobs\{state="delayed"\} 2$/m);
    const age = Number(/^delivery_queue_oldest_waiting_age_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(age).toBeGreaterThanOrEqual(1);
  });

  it('needs the admin token', async () => {
    expect((await fetch(`${configApi.url}/admin/v1/queue`)).status).toBe(401);
    expect((await fetch(`${configApi.url}/admin/v1/endpoints`)).status).toBe(401);
  });
});

describe('GET /admin/v1/endpoints', () => {
  const namespace = new IsolatedNamespace('admin-endpoints');
  const { configApi, worker } = useApps(
    {
      configApi: ConfigApiModule,
      worker: [
        DeliveryWorkerModule,
        {
          RETRY_SCHEDULE: '100ms,100ms,100ms',
          // The receivers answer from this (busy) process: a late 200 must not become a time-out, a failure.
          DELIVERY_TIMEOUT_MS: '10000',
          RECONCILE_INTERVAL: '1m',
          BREAKER_FAILURE_THRESHOLD: '2',
          BREAKER_COOLDOWN: '10m',
        },
      ],
    },
    { namespace },
  );
  const receivers: TestReceiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  });

  async function accountPushingTo(status: number): Promise<{ id: number; email: string; url: string }> {
    const receiver = await new TestReceiver().respondStatus(status).start();
    receivers.push(receiver);
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: receiver.url, permissions: 'all' });
    return { id: account.id, email: account.email, url: receiver.url };
  }

  it('lists an endpoint whose breaker really opened and one that is disabled, each under its filter', async () => {
    const healthy = await accountPushingTo(200);
    const failing = await accountPushingTo(503);
    const disabled = await accountPushingTo(200);
    await updatePrimaryDestination(namespace.db, disabled.id, { disabled_at: new Date(), disabled_reason: 'failing since yesterday' });
    await sendEvents(worker.app, healthy.id, [{ action: 'Customer_create', message: { id: 1 } }]);
    await sendEvents(worker.app, failing.id, [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { id } })));

    const all = await waitFor('the failing endpoint to be listed with an open breaker', async () => {
      const answer = await adminCall(configApi, 'GET', '/admin/v1/endpoints');
      return (answer.body.items as Json[]).some((item) => item.account_id === failing.id && item.breaker === 'open') ? answer : undefined;
    });
    expect(all.status).toBe(200);
    const items = all.body.items as Json[];
    expect(items.map((item) => item.account_id).sort()).toEqual([failing.id, disabled.id].sort());
    expect(items.find((item) => item.account_id === failing.id)).toEqual({
      account_id: failing.id,
      email: failing.email,
      push_url: failing.url,
      endpoint: new URL(failing.url).origin,
      breaker: 'open',
      consecutive_failures: expect.any(Number),
      retry_at: expect.any(String),
      last_error: expect.stringContaining('503'),
      disabled_at: null,
      disabled_reason: null,
    });
    expect(items.find((item) => item.account_id === disabled.id)).toMatchObject({
      email: disabled.email,
      breaker: 'closed',
      disabled_at: expect.any(String),
      disabled_reason: 'failing since yesterday',
    });

    const open = await adminCall(configApi, 'GET', '/admin/v1/endpoints?state=open');
    expect((open.body.items as Json[]).map((item) => item.account_id)).toEqual([failing.id]);
    const onlyDisabled = await adminCall(configApi, 'GET', '/admin/v1/endpoints?state=disabled');
    expect((onlyDisabled.body.items as Json[]).map((item) => item.account_id)).toEqual([disabled.id]);
  });

  it('refuses an unknown state with 422 naming it', async () => {
    await expectQueryError(configApi, 'GET', '/admin/v1/endpoints?state=broken', 'state');
  });
});
