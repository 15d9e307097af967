import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { endpointKeyOf, listOpenEndpoints, readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, useApps } from '../support/apps';
import { accountPushingTo, ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { type PrimaryDeliveryRow, primaryDeliveries } from '../support/model-deliveries';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { attemptRows, eventRows, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('breaker-schedule');
const KEYS = new RedisKeys(PREFIX);
// The waits below are deadlines on a loaded machine, not expectations of speed.
jest.setTimeout(240_000);
const SCHEDULE_DEADLINE_MS = 60_000;
/** The whole retry schedule (1s,1s,1s) and then some: a schedule still running would have ended every event by then. */
const LONGER_THAN_THE_SCHEDULE_MS = 5_000;

/** A held delivery's last_error while its endpoint's breaker is open. */
const HELD_BY_BREAKER = /^circuit open since \d+ consecutive failures?, held until a probe succeeds \(probe after \S+Z\): HTTP 503: server error$/;

/**
 * CONTRACT §5, "the breaker holds": while an endpoint's breaker is open, deliveries that fall due wait
 * in PostgreSQL (held, without a job): no call, no attempt and no step of their schedule. After
 * BREAKER_COOLDOWN the oldest held delivery goes alone as the probe; a success closes the breaker and
 * the held ones go; a manual redelivery always makes its first call. So an event ends `failed` only
 * after every call its schedule allows was made and failed. RETRY_SCHEDULE=1s,1s,1s: four calls.
 */
describe('the circuit breaker holds deliveries instead of spending their schedule', () => {
  const { configApi, ingest } = useApps({ configApi: ConfigApiModule, ingest: IngestModule });
  const receiver = useReceivers();

  /** A worker of the calling describe block's own: its cooldown decides when a probe goes. */
  function useWorker(cooldown: string): RunningApp {
    const settings = {
      RETRY_SCHEDULE: '1s,1s,1s',
      BREAKER_FAILURE_THRESHOLD: '3',
      BREAKER_COOLDOWN: cooldown,
      ENDPOINT_CONCURRENCY: '2',
      // The receiver answers 503 from this (busy) process: a late answer would be a time-out, another
      // error than the one every held delivery must name. No call here is meant to time out.
      DELIVERY_TIMEOUT_MS: '10000',
      RECONCILE_INTERVAL: '1s',
    };
    return useApps({ worker: [DeliveryWorkerModule, settings] }).worker;
  }

  const deadReceiver = (): Promise<TestReceiver> => receiver((started) => started.respondStatus(503));

  const failingAccount = async (target: TestReceiver, worker: RunningApp): Promise<number> => (await accountPushingTo(configApi, worker.app, target)).id;

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

  const callsOf = (target: TestReceiver, eventId: string): number => target.requests.filter((request) => request.headers['webhook-id'] === eventId).length;

  /** Once every one of the events waits held by the breaker. */
  async function allHeld(worker: RunningApp, eventIds: string[]): Promise<PrimaryDeliveryRow[]> {
    return waitFor(
      'every delivery to be held by the open breaker',
      async () => {
        const rows = await primaryDeliveries(worker.app.get(DataSource), eventIds);
        return rows.length === eventIds.length && rows.every((row) => row.held === 'breaker') ? rows : undefined;
      },
      { timeoutMs: SCHEDULE_DEADLINE_MS },
    );
  }

  /** Held deliveries spent no attempt: each one's attempts are the calls made for it, each its own step of the schedule. */
  async function expectOnlyCallsAttempted(worker: RunningApp, target: TestReceiver, rows: PrimaryDeliveryRow[]): Promise<void> {
    for (const row of rows) {
      expect(['queued', 'retrying']).toContain(row.status);
      expect(row.last_error).toMatch(HELD_BY_BREAKER);
      expect(row).toMatchObject({ series: 0, attempts: callsOf(target, row.event_id), series_attempts: callsOf(target, row.event_id) });
      const attempts = await attemptRows(worker.app, row.event_id);
      expect(attempts.map((attempt) => attempt.response_status)).toEqual(Array(row.attempts).fill(503));
    }
    expect(rows.reduce((sum, row) => sum + row.attempts, 0)).toBe(target.requests.length);
  }

  describe('with a cooldown longer than the test (no probe)', () => {
    const worker = useWorker('1h');

    it('holds every delivery falling due while the breaker is open, without a call, an attempt or a step of its schedule, however long', async () => {
      const target = await deadReceiver();
      const accountId = await failingAccount(target, worker);
      const eventIds = await ingestEvents(accountId, 10);

      const held = await allHeld(worker, eventIds);
      const redis = worker.app.get<Redis>(REDIS);
      expect((await readEndpointState(redis, KEYS, accountId, target.url)).state).toBe('open');
      // The breaker opened after 3 failed calls, with at most 2 more in flight; every other delivery waits uncalled.
      expect(target.requests.length).toBeGreaterThanOrEqual(3);
      expect(target.requests.length).toBeLessThanOrEqual(5);
      await expectOnlyCallsAttempted(worker, target, held);

      // Longer than the whole schedule: under the old rule every event would have ended failed by now.
      await new Promise((resolve) => setTimeout(resolve, LONGER_THAN_THE_SCHEDULE_MS));
      const later = await primaryDeliveries(worker.app.get(DataSource), eventIds);
      expect(later.map((row) => [row.status, row.attempts, row.series_attempts, row.held])).toEqual(held.map((row) => [row.status, row.attempts, row.series_attempts, 'breaker']));
      expect(target.requests.length).toBe(held.reduce((sum, row) => sum + row.attempts, 0));

      // Operators see it among the open endpoints, and in the worker's gauge.
      const endpoint = endpointKeyOf(accountId, target.url);
      expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).toContain(endpoint);
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(Number(/^callbacks_endpoints_breaker_open (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

      // A manual redelivery makes its first call through the open breaker; still failing, its next step
      // falls due while the breaker is open and waits held like the others (the failed call only counts).
      const [eventId] = eventIds;
      const calls = target.requests.length;
      expect((await fetch(`${configApi.url}/admin/v1/events/${eventId}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS })).status).toBe(202);
      const [redelivered] = await waitFor(
        'the redelivery’s first call, then its hold',
        async () => {
          const rows = await primaryDeliveries(worker.app.get(DataSource), [eventId]);
          return rows[0]?.series === 1 && rows[0].series_attempts === 1 && rows[0].held === 'breaker' ? rows : undefined;
        },
        { timeoutMs: SCHEDULE_DEADLINE_MS },
      );
      expect(redelivered).toMatchObject({ status: 'retrying', attempts: held[0].attempts + 1 });
      expect(target.requests.length).toBe(calls + 1);
      const series = (await attemptRows(worker.app, eventId)).filter((attempt) => attempt.series === 1);
      expect(series.map((attempt) => attempt.response_status)).toEqual([503]);
      expect((await readEndpointState(redis, KEYS, accountId, target.url)).state).toBe('open');
    });

    it('lets every held delivery go once a manual redelivery’s call succeeds and closes the breaker', async () => {
      const target = await deadReceiver();
      const accountId = await failingAccount(target, worker);
      const eventIds = await ingestEvents(accountId, 10);
      const held = await allHeld(worker, eventIds);
      await expectOnlyCallsAttempted(worker, target, held);
      const redis = worker.app.get<Redis>(REDIS);
      const endpoint = endpointKeyOf(accountId, target.url);

      // The receiver recovers; the redelivery's first call goes through the open breaker and closes it.
      target.respondStatus(200);
      const calls = target.requests.length;
      const last = eventIds[eventIds.length - 1];
      expect((await fetch(`${configApi.url}/admin/v1/events/${last}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS })).status).toBe(202);
      const delivered = await waitFor(
        'every held event to be delivered',
        async () => {
          const rows = await eventRows(worker.app, eventIds);
          return rows.every((row) => row.status === 'delivered') ? rows : undefined;
        },
        { timeoutMs: SCHEDULE_DEADLINE_MS },
      );
      expect(target.requests[calls].headers['webhook-id']).toBe(last);
      // One more call each, its first after the hold: nothing was spent while it waited.
      const before = new Map(held.map((row) => [row.event_id, row.attempts]));
      for (const row of delivered) {
        expect(row).toMatchObject({ series: row.event_id === last ? 1 : 0, attempts: (before.get(row.event_id) ?? 0) + 1, last_error: null });
        expect(callsOf(target, row.event_id)).toBe(row.attempts);
      }
      expect((await readEndpointState(redis, KEYS, accountId, target.url)).state).toBe('closed');
      expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).not.toContain(endpoint);
    });

    it('makes the first call of every event a bulk redelivery restarts, through the open breaker; the first success closes it and the held ones go', async () => {
      const target = await deadReceiver();
      const account = await createAccount(configApi);
      // One call per delivery (an empty schedule, CONTRACT §13): the events called before the breaker
      // opened end failed at once, the others wait held. Set before the first event, so every cache reads it.
      await worker.app.get(DataSource).query(`UPDATE destinations SET retry_schedule_ms = '{}', version = version + 1 WHERE account_id = $1 AND id = 'primary'`, [account.id]);
      await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
      const eventIds = await ingestEvents(account.id, 10);
      const settled = await waitFor(
        'every delivery to fail after its one call or wait held',
        async () => {
          const rows = await primaryDeliveries(worker.app.get(DataSource), eventIds);
          return rows.length === eventIds.length && rows.every((row) => row.status === 'failed' || row.held === 'breaker') ? rows : undefined;
        },
        { timeoutMs: SCHEDULE_DEADLINE_MS },
      );
      const failed = settled.filter((row) => row.status === 'failed').map((row) => row.event_id);
      // The breaker opened after 3 failed calls, with at most 2 more in flight.
      expect(failed.length).toBeGreaterThanOrEqual(3);
      expect(failed.length).toBeLessThanOrEqual(5);
      for (const row of settled) expect([row.attempts, callsOf(target, row.event_id)]).toEqual(row.status === 'failed' ? [1, 1] : [0, 0]);
      const redis = worker.app.get<Redis>(REDIS);
      expect((await readEndpointState(redis, KEYS, account.id, target.url)).state).toBe('open');

      target.respondStatus(200);
      const calls = target.requests.length;
      const redelivery = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS, body: JSON.stringify({ status: 'failed' }) });
      expect(redelivery.status).toBe(202);
      expect(((await redelivery.json()) as { count: number }).count).toBe(failed.length);
      const delivered = await waitFor(
        'every event to be delivered',
        async () => {
          const rows = await eventRows(worker.app, eventIds);
          return rows.every((row) => row.status === 'delivered') ? rows : undefined;
        },
        { timeoutMs: SCHEDULE_DEADLINE_MS },
      );
      // The breaker was open (no probe for an hour): the first call after the recovery is a redelivered event's.
      expect(failed).toContain(target.requests[calls].headers['webhook-id']);
      for (const row of delivered) {
        const redelivered = failed.includes(row.event_id);
        expect(row).toMatchObject({ series: redelivered ? 1 : 0, attempts: redelivered ? 2 : 1, last_error: null });
        expect(callsOf(target, row.event_id)).toBe(row.attempts);
      }
      expect((await readEndpointState(redis, KEYS, account.id, target.url)).state).toBe('closed');
    });
  });

  describe('with a short cooldown (probes)', () => {
    const worker = useWorker('2s');

    it('sends the oldest held delivery alone as the probe after each cooldown, and lets the held ones go once a probe succeeds', async () => {
      const target = await deadReceiver();
      const accountId = await failingAccount(target, worker);
      const eventIds = await ingestEvents(accountId, 6);
      await allHeld(worker, eventIds);
      const redis = worker.app.get<Redis>(REDIS);

      // The next call is a probe: one call, for the oldest delivery held (ingest accepted the batch in order).
      const calls = target.requests.length;
      const probe = await waitFor('the probe after the cooldown', () => target.requests[calls], { timeoutMs: SCHEDULE_DEADLINE_MS });
      expect(probe.headers['webhook-id']).toBe(eventIds[0]);
      // It failed: the breaker is open again for another cooldown, and no other call went meanwhile.
      await waitFor('the breaker to open again', async () => {
        const state = await readEndpointState(redis, KEYS, accountId, target.url);
        return state.state === 'open' && Date.parse(state.retry_at ?? '') > probe.receivedAt;
      });
      expect(target.requests.length).toBe(calls + 1);
      const rows = await primaryDeliveries(worker.app.get(DataSource), eventIds);
      expect(rows.filter((row) => row.status === 'failed').map((row) => row.attempts)).toEqual(rows.filter((row) => row.status === 'failed').map(() => 4));

      // The receiver recovers: the next probe succeeds, the breaker closes and every held delivery goes.
      target.respondStatus(200);
      const delivered = await waitFor(
        'every event to end',
        async () => {
          const ended = await eventRows(worker.app, eventIds);
          return ended.every((row) => row.status === 'delivered' || row.status === 'failed') ? ended : undefined;
        },
        { timeoutMs: SCHEDULE_DEADLINE_MS },
      );
      // An event ends failed only after all four of its calls were made and failed.
      for (const row of delivered) {
        expect(callsOf(target, row.event_id)).toBe(row.attempts);
        if (row.status === 'failed') expect(row.attempts).toBe(4);
      }
      expect(delivered.filter((row) => row.status === 'delivered').length).toBeGreaterThan(0);
      expect((await readEndpointState(redis, KEYS, accountId, target.url)).state).toBe('closed');
    });
  });
});
