import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openApiSign } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DestinationSettingsCache } from '../../apps/delivery-worker/src/delivery/destinations/destination-settings.cache';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { useApps } from '../support/apps';
import { accountPushingTo, ADMIN_HEADERS, type TestAccount } from '../support/fixtures';
import { TestReceiver, useReceivers } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { eventRow, type EventRow, sendEvents, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('endpoint-disable');
jest.setTimeout(180_000);
/** How long an event may take to settle on a loaded machine: a deadline, never an expectation of speed. */
const SETTLE_DEADLINE_MS = 45_000;

/**
 * Far longer than any test runs: the endpoint's failure clock (failing_since) is moved back in the row
 * instead, so whether a call lands before or after the threshold never depends on the machine's speed.
 */
const DISABLE_AFTER_MS = 3_600_000;
const MINUTE_MS = 60_000;
const DISABLED_ERROR =
  /^endpoint disabled since \S+Z \(every attempt since \S+Z failed \(ENDPOINT_DISABLE_AFTER 1h\)\); no call made\. Enable it \(POST \/admin\/v1\/accounts\/\d+\/endpoint\/enable, or set_url\), then redeliver$/;

interface SettingsState {
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

describe('endpoints that stay dead are disabled (ENDPOINT_DISABLE_AFTER)', () => {
  const warnings: string[] = [];
  beforeAll(() => {
    // The worker's Nest loggers are silent in tests; the warning is read where it is written.
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
  });
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        ENDPOINT_DISABLE_AFTER: '1h',
        RETRY_SCHEDULE: '100ms,100ms',
        // The breaker stays out of the way: this suite is about disabling.
        BREAKER_FAILURE_THRESHOLD: '10000',
        // The receivers answer from this (busy) process: a late 200 or 503 would be a time-out, a retry and
        // another error than the one expected. No call here is meant to time out.
        DELIVERY_TIMEOUT_MS: '10000',
        RECONCILE_INTERVAL: '500ms',
      },
    ],
  });
  afterAll(() => {
    jest.restoreAllMocks();
  });
  const receiver = useReceivers();

  const failingReceiver = (): Promise<TestReceiver> => receiver((started) => started.respondStatus(503));

  const accountFor = (target: TestReceiver): Promise<TestAccount> => accountPushingTo(configApi, worker.app, target);

  const admin = async (method: 'GET' | 'POST', path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${configApi.url}/admin/v1${path}`, { method, headers: ADMIN_HEADERS });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  /** The failure clock and the disabling live on the account's primary destination row. */
  async function settingsState(accountId: number): Promise<SettingsState> {
    const [row] = await worker.app
      .get(DataSource)
      .query<SettingsState[]>(`SELECT failing_since, disabled_at, disabled_reason FROM destinations WHERE account_id = $1 AND id = 'primary'`, [accountId]);
    return row;
  }

  /** Sends one event and waits for it to reach a final status. */
  async function deliverOne(accountId: number): Promise<EventRow> {
    const [event] = await sendEvents(worker.app, accountId, [{ action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create }]);
    return waitFor(
      `event ${event.eventId} to reach a final status`,
      async () => {
        const row = await eventRow(worker.app, event.eventId);
        return row.status === 'delivered' || row.status === 'failed' ? row : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
  }

  async function redeliver(eventId: string, series: number): Promise<EventRow> {
    expect((await admin('POST', `/events/${eventId}/redeliver`)).status).toBe(202);
    return waitFor(
      `event ${eventId} to finish series ${series}`,
      async () => {
        const row = await eventRow(worker.app, eventId);
        return row.series === series && (row.status === 'delivered' || row.status === 'failed') ? row : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
  }

  /**
   * The endpoint's failure clock as if its run of failures had started `ms` earlier; the worker reloads
   * the account (as it does on the settings channel's notice of a change).
   */
  async function moveFailingSinceBack(accountId: number, ms: number): Promise<Date> {
    const [[moved]] = await worker.app
      .get(DataSource)
      .query<[{ failing_since: Date }[], number]>(
        `UPDATE destinations SET failing_since = failing_since - make_interval(secs => $2::double precision / 1000)
          WHERE account_id = $1 AND id = 'primary' AND failing_since IS NOT NULL RETURNING failing_since`,
        [accountId, ms],
      );
    expect(moved.failing_since).toBeInstanceOf(Date);
    worker.app.get(DestinationSettingsCache).invalidate(accountId);
    return moved.failing_since;
  }

  /** Fails once, then the endpoint has failed for longer than ENDPOINT_DISABLE_AFTER; the next event disables it. */
  async function disable(account: TestAccount, target: TestReceiver): Promise<EventRow> {
    expect((await deliverOne(account.id)).status).toBe('failed');
    expect((await settingsState(account.id)).failing_since).toBeInstanceOf(Date);
    await moveFailingSinceBack(account.id, DISABLE_AFTER_MS + 1000);
    const calls = target.requests.length;
    const row = await deliverOne(account.id);
    expect(target.requests.length).toBe(calls);
    return row;
  }

  it('disables the endpoint, fails its events at once without a call, and calls it again once enabled', async () => {
    const target = await failingReceiver();
    const account = await accountFor(target);
    const disabledEvent = await disable(account, target);

    expect(disabledEvent).toMatchObject({ status: 'failed', attempts: 0, next_attempt_at: null });
    expect(disabledEvent.last_error).toMatch(DISABLED_ERROR);
    const view = await admin('GET', `/accounts/${account.id}`);
    expect(view.body.disabled_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/));
    expect(view.body.disabled_reason).toMatch(/^every attempt since \S+Z failed \(ENDPOINT_DISABLE_AFTER 1h\)$/);
    // Said once, naming the account's primary destination and why; never the push URL's path or query,
    // which may carry the receiver's own secret.
    expect(warnings.filter((warning) => warning.startsWith(`destination primary of account ${account.id} disabled: every attempt since `))).toHaveLength(1);
    expect(warnings.filter((warning) => warning.includes(target.url))).toEqual([]);
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(Number(/^callbacks_endpoints_disabled (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    // A manual redelivery makes no call either: it tells the operator to enable the endpoint first.
    const calls = target.requests.length;
    const refused = await redeliver(disabledEvent.event_id, 1);
    expect(refused).toMatchObject({ status: 'failed', attempts: 0 });
    expect(refused.last_error).toMatch(DISABLED_ERROR);
    expect(target.requests.length).toBe(calls);

    target.respondStatus(200);
    const enabled = await admin('POST', `/accounts/${account.id}/endpoint/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id: account.id, disabled_at: null, disabled_reason: null, push_url: target.url });
    expect(await settingsState(account.id)).toEqual({ failing_since: null, disabled_at: null, disabled_reason: null });
    // Enabling an endpoint that is not disabled is a harmless 200.
    expect((await admin('POST', `/accounts/${account.id}/endpoint/enable`)).status).toBe(200);

    expect(await redeliver(disabledEvent.event_id, 2)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(target.requests.at(-1)?.headers['webhook-id']).toBe(disabledEvent.event_id);
  });

  it('is enabled again by set_url, and any success restarts the failure clock', async () => {
    const target = await failingReceiver();
    const account = await accountFor(target);
    expect((await disable(account, target)).last_error).toMatch(DISABLED_ERROR);

    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    const sign = openApiSign({ email: account.email, openApiToken: account.open_api_token, timestamp, nonce });
    const query = new URLSearchParams({ email: account.email, timestamp, nonce, sign_version: 'v2', sign });
    const setUrl = await fetch(`${configApi.url}/open_api_v1/set_url?${query.toString()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push_url: target.url }),
    });
    expect(setUrl.status).toBe(200);
    expect((await admin('GET', `/accounts/${account.id}`)).body).toMatchObject({ disabled_at: null, disabled_reason: null });

    target.respondStatus(200);
    expect((await deliverOne(account.id)).status).toBe('delivered');
    expect((await settingsState(account.id)).failing_since).toBeNull();

    // Failing since T1, 40 minutes ago; a success now resets the clock; failing again since T2.
    target.respondStatus(503);
    expect((await deliverOne(account.id)).status).toBe('failed');
    const firstRun = (await moveFailingSinceBack(account.id, 40 * MINUTE_MS)).getTime();
    target.respondStatus(200);
    expect((await deliverOne(account.id)).status).toBe('delivered');
    expect((await settingsState(account.id)).failing_since).toBeNull();
    target.respondStatus(503);
    const secondFailureFrom = Date.now();
    expect((await deliverOne(account.id)).status).toBe('failed');
    expect((await settingsState(account.id)).failing_since?.getTime()).toBeGreaterThanOrEqual(secondFailureFrom - 5);

    // The same timeline 40 minutes on: T1 80 minutes ago (more than ENDPOINT_DISABLE_AFTER), T2 40 (less):
    // still called, every attempt.
    const secondRun = (await moveFailingSinceBack(account.id, 40 * MINUTE_MS)).getTime();
    expect(Date.now() - (firstRun - 40 * MINUTE_MS)).toBeGreaterThan(DISABLE_AFTER_MS);
    expect(Date.now() - secondRun).toBeLessThan(DISABLE_AFTER_MS);
    const calls = target.requests.length;
    const stillCalled = await deliverOne(account.id);
    expect(stillCalled).toMatchObject({ status: 'failed', attempts: 3 });
    expect(stillCalled.last_error).toMatch(/^HTTP 503: server error/);
    expect(target.requests.length).toBe(calls + 3);
    expect((await settingsState(account.id)).disabled_at).toBeNull();
  });
});
