import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import type { Json } from '../support/admin-client';
import { useApps } from '../support/apps';
import { accountPushingTo, ADMIN_HEADERS, createAccount, type TestAccount } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { attemptRows, eventRow, type EventRow, sendEvents, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('retry-policy');
jest.setTimeout(180_000);
/** How long an event may take to settle on a loaded machine: a deadline, never an expectation of speed. */
const SETTLE_DEADLINE_MS = 45_000;

/*
 * CONTRACT §13 through the real worker: each destination's own schedule, stop_on and disable_on, the
 * deadline (expire_after) with its final status `expired` (a subject's next event released by it, listed
 * and filtered by the admin API, redeliverable), all set through the primary's Open API route.
 */
describe('retry policy per destination (CONTRACT §13)', () => {
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        // The default schedule is long: a delivery that retries at this pace shows the destination's own schedule was not used.
        RETRY_SCHEDULE: '10m',
        // The breaker stays out of the way: it has its own suite (retry-policy-held).
        BREAKER_FAILURE_THRESHOLD: '10000',
        DELIVERY_TIMEOUT_MS: '10000',
        RECONCILE_INTERVAL: '500ms',
      },
    ],
  });
  const receiver = useReceivers();

  const putPrimary = (account: TestAccount, body: unknown): Promise<{ status: number; body: Json }> =>
    openApiCall<Json>(configApi.url, account, 'PUT', 'destinations/primary', { body });

  async function accountWith(target: TestReceiver, policy: Record<string, unknown>): Promise<TestAccount> {
    const account = await accountPushingTo(configApi, worker.app, target);
    const answer = await putPrimary(account, policy);
    expect(answer).toMatchObject({ status: 200, body: { code: 1000 } });
    return account;
  }

  const customer = (id: number): { action: string; message: Record<string, unknown> } => ({
    action: 'Customer_create',
    message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id },
  });

  async function settled(eventId: string, series = 0): Promise<EventRow> {
    return waitFor(
      `event ${eventId} to reach a final status in series ${series}`,
      async () => {
        const row = await eventRow(worker.app, eventId);
        return row.series === series && ['delivered', 'failed', 'expired'].includes(row.status) ? row : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
  }

  const admin = async (method: 'GET' | 'POST', path: string): Promise<{ status: number; body: Json }> => {
    const response = await fetch(`${configApi.url}/admin/v1${path}`, { method, headers: ADMIN_HEADERS });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it('refuses a wrong policy with code 2000 naming the field, and shows the one it keeps', async () => {
    const account = await createAccount(configApi);
    const refused: [unknown, string][] = [
      [{ retry: { schedule: ['50ms'] } }, 'retry.schedule'],
      [{ retry: { schedule: Array.from({ length: 21 }, () => '1s') } }, 'retry.schedule'],
      [{ retry: { stop_on: [429] } }, 'retry.stop_on'],
      [{ retry: { stop_on: [500] } }, 'retry.stop_on'],
      [{ retry: { disable_on: [408] } }, 'retry.disable_on'],
      [{ retry: { stop_on: [404], disable_on: [404] } }, 'retry.disable_on'],
      [{ expire_after: '500ms' }, 'expire_after'],
      [{ expire_after: '31d' }, 'expire_after'],
      [{ content_type: 'JSON' }, 'content_type'],
    ];
    for (const [body, field] of refused) {
      const answer = await putPrimary(account, body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(2000);
      expect(String(answer.body.exception?.message)).toContain(field);
    }
    const kept = await putPrimary(account, { retry: { schedule: ['200ms', '5m'], stop_on: [404] }, expire_after: '2h' });
    expect(kept.body.destination).toMatchObject({ id: 'primary', retry: { schedule: ['200ms', '5m'], stop_on: [404], disable_on: [] }, expire_after: '2h' });
    // A field not sent keeps its value.
    const partly = await putPrimary(account, { retry: { disable_on: [410] } });
    expect(partly.body.destination).toMatchObject({ retry: { schedule: ['200ms', '5m'], stop_on: [404], disable_on: [410] }, expire_after: '2h' });
  });

  it("follows the destination's own schedule, not RETRY_SCHEDULE, and fails after its last call", async () => {
    const target = await receiver((started) => started.respondStatus(500));
    const account = await accountWith(target, { retry: { schedule: ['200ms', '300ms'] } });
    const [event] = await sendEvents(worker.app, account.id, [customer(1)]);
    const row = await settled(event.eventId);
    expect(row).toMatchObject({ status: 'failed', attempts: 3 });
    const calls = target.requests.map((request) => request.receivedAt);
    expect(calls).toHaveLength(3);
    expect(calls[1] - calls[0]).toBeGreaterThanOrEqual(200 - 5);
    expect(calls[2] - calls[1]).toBeGreaterThanOrEqual(300 - 5);
  });

  it('ends a delivery at once on a stop_on status, and retries a status not listed', async () => {
    let status = 404;
    const target = await receiver((started) => started.respondWith((_request, response) => void response.writeHead(status).end()));
    const account = await accountWith(target, { retry: { schedule: ['200ms'], stop_on: [404] } });
    const [stopped] = await sendEvents(worker.app, account.id, [customer(2)]);
    expect(await settled(stopped.eventId)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'HTTP 404: not retried' });
    status = 400;
    const [retried] = await sendEvents(worker.app, account.id, [customer(3)]);
    expect(await settled(retried.eventId)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(target.requests).toHaveLength(3);
  });

  it('disables the destination on a disable_on status, naming it; later events make no call until it is enabled', async () => {
    let status = 410;
    const target = await receiver((started) => started.respondWith((_request, response) => void response.writeHead(status).end()));
    const account = await accountWith(target, { retry: { schedule: ['200ms', '200ms'], disable_on: [410] } });
    const [gone] = await sendEvents(worker.app, account.id, [customer(4)]);
    expect(await settled(gone.eventId)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'HTTP 410: not retried' });
    const [state] = await worker.app
      .get(DataSource)
      .query<{ disabled_at: Date | null; disabled_reason: string | null }[]>(`SELECT disabled_at, disabled_reason FROM destinations WHERE account_id = $1 AND id = 'primary'`, [
        account.id,
      ]);
    expect(state.disabled_at).not.toBeNull();
    expect(state.disabled_reason).toContain('410');

    const [after] = await sendEvents(worker.app, account.id, [customer(5)]);
    const ended = await settled(after.eventId);
    expect(ended.status).toBe('failed');
    expect(ended.attempts).toBe(0);
    expect(target.requests).toHaveLength(1);

    status = 200;
    expect((await admin('POST', `/accounts/${account.id}/endpoint/enable`)).status).toBeLessThan(300);
    expect((await admin('POST', `/events/${after.eventId}/redeliver`)).status).toBe(202);
    expect(await settled(after.eventId, 1)).toMatchObject({ status: 'delivered' });
  });

  it('ends a delivery `expired` at its deadline without another call, lists and filters it, and redelivers it in a new series', async () => {
    let status = 500;
    const target = await receiver((started) => started.respondWith((_request, response) => void response.writeHead(status).end()));
    const account = await accountWith(target, { retry: { schedule: ['1h'] }, expire_after: '2s' });
    const [event] = await sendEvents(worker.app, account.id, [customer(6)]);
    const row = await settled(event.eventId);
    expect(row).toMatchObject({ status: 'expired', attempts: 1, last_error: 'expired after 2s' });
    expect(target.requests).toHaveLength(1);

    const listed = await admin('GET', `/events?account_id=${account.id}&status=expired`);
    expect(listed.status).toBe(200);
    expect((listed.body.items as Json[]).map((item) => item.event_id)).toEqual([event.eventId]);
    expect(((await admin('GET', `/events?account_id=${account.id}&status=failed`)).body.items as Json[]).length).toBe(0);

    status = 200;
    expect((await admin('POST', `/events/${event.eventId}/redeliver`)).status).toBe(202);
    expect(await settled(event.eventId, 1)).toMatchObject({ status: 'delivered' });
    expect((await attemptRows(worker.app, event.eventId)).map((attempt) => attempt.response_status)).toEqual([500, 200]);
  });

  it("releases a subject's next event when the one ahead of it expires", async () => {
    const target = await receiver((started) =>
      started.respondWith((request, response) => {
        // The subject's first event always fails; the ones behind it succeed.
        const body = JSON.parse(request.body) as { message: { nick_name?: string } };
        void response.writeHead(body.message.nick_name === 'blocked' ? 500 : 200).end();
      }),
    );
    const account = await accountWith(target, { retry: { schedule: ['1h'] }, expire_after: '8s', ordering: 'subject' });
    const first = { action: 'Customer_create', message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: 77, nick_name: 'blocked' } };
    const second = { action: 'Customer_update', message: { ...structuredClone(SAMPLE_MESSAGES.Customer_update), id: 77, nick_name: 'fine' } };
    const [ahead] = await sendEvents(worker.app, account.id, [first]);
    // Accepted 5 s later, so its own deadline is 5 s after the first one's: it is released by the
    // first one's expiry with time left, which only the release (not its own deadline) explains.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const [behind] = await sendEvents(worker.app, account.id, [second]);
    const expired = await settled(ahead.eventId);
    expect(expired.status).toBe('expired');
    const delivered = await settled(behind.eventId);
    expect(delivered.status).toBe('delivered');
    // Held behind its subject until the first one ended: never overtaken.
    const bodies = target.requests.map((request) => (JSON.parse(request.body) as { message: { nick_name?: string } }).message.nick_name);
    expect(bodies).toEqual(['blocked', 'fine']);
    const [expiredAt] = await worker.app.get(DataSource).query<{ at: Date }[]>(`SELECT updated_at AS at FROM deliveries WHERE event_seq = $1 AND destination_id = 'primary'`, [ahead.seq]);
    expect(target.requests[1].receivedAt).toBeGreaterThanOrEqual(expiredAt.at.getTime() - 50);
  });
});
