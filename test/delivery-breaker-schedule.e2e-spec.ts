import type Redis from 'ioredis';
import { endpointKeyOf, listOpenEndpoints, readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings } from './support/fixtures';
import { TestReceiver, useReceivers } from './support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from './support/wait-for';
import { attemptRows, eventRows, useOwnRedisPrefix } from './support/worker-process';

const PREFIX = useOwnRedisPrefix('breaker-schedule');
const KEYS = new RedisKeys(PREFIX);
// The waits below are deadlines on a loaded machine, not expectations of speed.
jest.setTimeout(240_000);
const SCHEDULE_DEADLINE_MS = 60_000;
/** No probe during the test, however long a loaded machine makes it: once open, the breaker stays open. */
const COOLDOWN_MS = 3_600_000;

const CIRCUIT_OPEN = /^circuit open until \S+Z after \d+ consecutive failures: HTTP 503: server error$/;

/**
 * CONTRACT §5, "the schedule is the law": the breaker only decides whether an attempt makes its call.
 * With RETRY_SCHEDULE=1s,1s,1s every event gets its four attempts at their times and ends `failed`,
 * while the receiver sees only the calls made before the breaker opened.
 */
describe('the circuit breaker never suspends the retry schedule', () => {
  let configApi: RunningApp;
  let ingest: RunningApp;
  let worker: RunningApp;
  const receiver = useReceivers();

  beforeAll(async () => {
    [configApi, ingest] = await Promise.all([startApp(ConfigApiModule), startApp(IngestModule)]);
    worker = await startApp(DeliveryWorkerModule, {
      RETRY_SCHEDULE: '1s,1s,1s',
      BREAKER_FAILURE_THRESHOLD: '3',
      BREAKER_COOLDOWN: `${COOLDOWN_MS}ms`,
      ENDPOINT_CONCURRENCY: '2',
      // The receiver answers 503 from this (busy) process: a late answer would be a time-out, another
      // error than the one every skipped attempt must name. No call here is meant to time out.
      DELIVERY_TIMEOUT_MS: '10000',
      RECONCILE_INTERVAL: '1s',
    });
  });

  afterAll(async () => {
    await worker?.close();
    await Promise.all([configApi?.close(), ingest?.close()]);
  });

  const deadReceiver = (): Promise<TestReceiver> => receiver((started) => started.respondStatus(503));

  async function ingestEvents(accountId: number, count: number): Promise<string[]> {
    const events = Array.from({ length: count }, (_, index) => ({
      account_id: accountId,
      action: 'Customer_create',
      message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: index + 1 },
    }));
    const response = await fetch(`${ingest.url}/v1/events/batch`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify({ events }) });
    expect(response.status).toBe(202);
    const { results } = (await response.json()) as { results: { status: string; event_id: string }[] };
    expect(results.every((result) => result.status === 'accepted')).toBe(true);
    return results.map((result) => result.event_id);
  }

  const finalStatuses = async (eventIds: string[]) => {
    const rows = await eventRows(worker.app, eventIds);
    return rows.length === eventIds.length && rows.every((row) => row.status === 'delivered' || row.status === 'failed') ? rows : undefined;
  };

  it('fails ten events after all their scheduled attempts, with far fewer calls, and delivers them when redelivered', async () => {
    const target = await deadReceiver();
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    const eventIds = await ingestEvents(account.id, 10);

    const failed = await waitFor('every event to end after its schedule', () => finalStatuses(eventIds), { timeoutMs: SCHEDULE_DEADLINE_MS });
    expect(failed.map((row) => row.status)).toEqual(Array(10).fill('failed'));
    let skipped = 0;
    for (const row of failed) {
      expect(row).toMatchObject({ attempts: 4, series: 0, series_attempts: 4, next_attempt_at: null });
      expect(row.last_error).toMatch(/; retries exhausted after 4 attempts$/);
      const attempts = await attemptRows(worker.app, row.event_id);
      expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4]);
      // Each attempt at its time: never earlier than its delay (1 s, jittered by at most 15 %), breaker
      // or not. How much later it runs is the machine's load; a schedule suspended by the breaker would
      // not end before the cooldown (an hour), so the events ending at all, breaker still open, shows it.
      for (let index = 1; index < attempts.length; index += 1) {
        const gap = attempts[index].started_at.getTime() - attempts[index - 1].started_at.getTime();
        expect(gap).toBeGreaterThanOrEqual(800);
      }
      for (const attempt of attempts) {
        if (attempt.response_status === 503) continue;
        // Skipped by the open breaker: recorded, no request made.
        expect(attempt).toMatchObject({ response_status: null, duration_ms: 0, request_body: '', request_headers: {} });
        expect(attempt.error).toMatch(CIRCUIT_OPEN);
        skipped += 1;
      }
    }
    expect(target.requests.length + skipped).toBe(40);
    // The breaker opened after 3 failures, with at most 2 more calls in flight.
    expect(target.requests.length).toBeLessThanOrEqual(5);
    const redis = worker.app.get<Redis>(REDIS);
    expect((await readEndpointState(redis, KEYS, account.id, target.url)).state).toBe('open');
    // Operators see it among the open endpoints, and in the worker's gauge.
    const endpoint = endpointKeyOf(account.id, target.url);
    expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).toContain(endpoint);
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(Number(/^callbacks_endpoints_breaker_open (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    // The receiver recovers; a bulk redelivery's first calls go through the open breaker and close it.
    target.respondStatus(200);
    const redelivery = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/redeliver`, {
      method: 'POST',
      headers: ADMIN_HEADERS,
      body: JSON.stringify({ status: 'failed' }),
    });
    expect(redelivery.status).toBe(202);
    expect(((await redelivery.json()) as { count: number }).count).toBe(10);
    const delivered = await waitFor(
      'every redelivered event to be delivered',
      async () => {
        const rows = await eventRows(worker.app, eventIds);
        return rows.every((row) => row.status === 'delivered') ? rows : undefined;
      },
      { timeoutMs: SCHEDULE_DEADLINE_MS },
    );
    for (const row of delivered) expect(row).toMatchObject({ series: 1, attempts: 5 });
    const deliveredIds = new Set(target.requests.map((request) => request.headers['webhook-id']));
    for (const eventId of eventIds) expect(deliveredIds.has(eventId)).toBe(true);
    expect((await readEndpointState(redis, KEYS, account.id, target.url)).state).toBe('closed');
    expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).not.toContain(endpoint);
  });

  it('makes the first call of a single manual redelivery even while the breaker is open', async () => {
    const target = await deadReceiver();
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    const eventIds = await ingestEvents(account.id, 4);
    await waitFor('every event to end after its schedule', () => finalStatuses(eventIds), { timeoutMs: SCHEDULE_DEADLINE_MS });
    const redis = worker.app.get<Redis>(REDIS);
    expect((await readEndpointState(redis, KEYS, account.id, target.url)).state).toBe('open');

    // Still failing: the redelivery's first call is made anyway (and fails); its later attempts are skipped.
    const [eventId] = eventIds;
    const calls = target.requests.length;
    expect((await fetch(`${configApi.url}/admin/v1/events/${eventId}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS })).status).toBe(202);
    const [row] = await waitFor('the redelivered series to end', async () => {
      const rows = await eventRows(worker.app, [eventId]);
      return rows[0]?.series === 1 && rows[0].status === 'failed' ? rows : undefined;
    }, { timeoutMs: SCHEDULE_DEADLINE_MS });
    expect(row).toMatchObject({ attempts: 8, series_attempts: 4 });
    expect(target.requests.length).toBe(calls + 1);
    const series = (await attemptRows(worker.app, eventId)).filter((attempt) => attempt.series === 1);
    expect(series.map((attempt) => attempt.response_status)).toEqual([503, null, null, null]);
    for (const attempt of series.slice(1)) expect(attempt.error).toMatch(CIRCUIT_OPEN);
  });
});
