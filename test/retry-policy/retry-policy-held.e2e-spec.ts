import { SAMPLE_MESSAGES } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import type { Json } from '../support/admin-client';
import { useApps } from '../support/apps';
import { accountPushingTo, type TestAccount } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { eventRows, sendEvents, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('retry-policy-held');
jest.setTimeout(180_000);
const SETTLE_DEADLINE_MS = 45_000;

/*
 * CONTRACT §13 with §5 and §11: deliveries held without a call (an open breaker, a paused destination)
 * still reach their deadline and end `expired`, without a call or an attempt, and the destination's view
 * counts them as held until then.
 */
describe('deadlines of held deliveries (CONTRACT §13)', () => {
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        RETRY_SCHEDULE: '1h',
        // One failed call opens the breaker, and it stays open for the whole suite: no probe goes.
        BREAKER_FAILURE_THRESHOLD: '1',
        BREAKER_COOLDOWN: '1h',
        DELIVERY_TIMEOUT_MS: '10000',
        RECONCILE_INTERVAL: '500ms',
      },
    ],
  });
  const receiver = useReceivers();

  const signed = (account: TestAccount, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<{ status: number; body: Json }> =>
    openApiCall<Json>(configApi.url, account, method, path, { body });

  async function primaryView(account: TestAccount): Promise<Json> {
    const listed = await signed(account, 'GET', 'destinations');
    return (listed.body.items as Json[]).find((destination) => destination.id === 'primary') as Json;
  }

  async function accountWith(target: TestReceiver, expireAfter: string): Promise<TestAccount> {
    const account = await accountPushingTo(configApi, worker.app, target);
    expect((await signed(account, 'PUT', 'destinations/primary', { expire_after: expireAfter })).status).toBe(200);
    return account;
  }

  const customers = (from: number, count: number): { action: string; message: Record<string, unknown> }[] =>
    Array.from({ length: count }, (_, index) => ({ action: 'Customer_create', message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: from + index } }));

  async function allEnded(eventIds: string[]): Promise<{ status: string; attempts: number; last_error: string | null }[]> {
    return waitFor(
      `${eventIds.length} events to reach a final status`,
      async () => {
        const rows = await eventRows(worker.app, eventIds);
        return rows.length === eventIds.length && rows.every((row) => ['delivered', 'failed', 'expired'].includes(row.status)) ? rows : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
  }

  it('expires deliveries an open breaker holds, without a call or an attempt, counting them held meanwhile', async () => {
    const target = await receiver((started) => started.respondStatus(500));
    const account = await accountWith(target, '4s');
    const [opener] = await sendEvents(worker.app, account.id, customers(1, 1));
    await waitFor('the breaker to open', async () => ((await primaryView(account)).state.breaker === 'open' ? true : undefined), {
      timeoutMs: SETTLE_DEADLINE_MS,
    });
    const held = await sendEvents(worker.app, account.id, customers(2, 3));
    const view = await waitFor(
      'the three deliveries to be held',
      async () => {
        const destination = await primaryView(account);
        return destination.state.held === 3 ? destination : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
    expect(view.state.breaker).toBe('open');

    const rows = await allEnded([opener.eventId, ...held.map((event) => event.eventId)]);
    expect(rows.map((row) => [row.status, row.attempts])).toEqual([
      ['expired', 1],
      ['expired', 0],
      ['expired', 0],
      ['expired', 0],
    ]);
    expect(rows.every((row) => row.last_error === 'expired after 4s')).toBe(true);
    // Only the call that opened the breaker reached the receiver.
    expect(target.requests).toHaveLength(1);
    expect((await primaryView(account)).state.held).toBe(0);
  });

  it('expires the deliveries of a paused destination without a call', async () => {
    const target = await receiver();
    const account = await accountWith(target, '2s');
    expect((await signed(account, 'POST', 'destinations/primary/pause')).status).toBe(200);
    const events = await sendEvents(worker.app, account.id, customers(10, 2));
    const rows = await allEnded(events.map((event) => event.eventId));
    expect(rows.map((row) => [row.status, row.attempts, row.last_error])).toEqual([
      ['expired', 0, 'expired after 2s'],
      ['expired', 0, 'expired after 2s'],
    ]);
    expect(target.requests).toHaveLength(0);
  });
});
