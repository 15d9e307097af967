import { DataSource } from 'typeorm';
import { Webhook } from 'standardwebhooks';
import { EVENT_ACTIONS, type EventAction, type PushContentType, SAMPLE_MESSAGES } from '@app/payloads';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { DestinationSettingsCache, SETTINGS_TTL_MS } from '../../apps/delivery-worker/src/delivery/destinations/destination-settings.cache';
import { type RunningApp, useApps } from '../support/apps';
import { accountPushingTo as pushingAccount, ADMIN_HEADERS, createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { type ReceivedRequest, TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import {
  attemptRows,
  deliveryQueueOf,
  eventRow,
  eventRows,
  type NewTestEvent,
  sendEvents,
  type StoredTestEvent,
  useOwnRedisPrefix,
} from '../support/worker-process';
import { asFormParsed, parseFormBody } from '../support/form-expectation';

useOwnRedisPrefix('delivery-main');
// The e2e project's testTimeout is not applied per project; these tests wait on real retries and cooldowns.
jest.setTimeout(120_000);
/** How long an event may take to settle on a loaded machine: a deadline, never an expectation of speed. */
const SETTLE_DEADLINE_MS = 45_000;

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function webhookHeaders(request: ReceivedRequest): Record<string, string> {
  return {
    'webhook-id': header(request, 'webhook-id'),
    'webhook-timestamp': header(request, 'webhook-timestamp'),
    'webhook-signature': header(request, 'webhook-signature'),
  };
}

function sample(action: EventAction): NewTestEvent {
  return { action, message: structuredClone(SAMPLE_MESSAGES[action]) };
}

describe('callback delivery', () => {
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        RETRY_SCHEDULE: '200ms,400ms',
        // The receivers here run in this (busy) process: an answer they give must never be late for the
        // deadline, or a delivery expected at its first attempt becomes a time-out and a retry. The
        // deadline itself is tested on a worker of its own below, against a receiver that never answers.
        DELIVERY_TIMEOUT_MS: '10000',
        // The reconciler has its own file; here it must not re-enqueue events a second worker owns.
        RECONCILE_INTERVAL: '1m',
        BREAKER_COOLDOWN: '1s',
        WORKER_CONCURRENCY: '16',
      },
    ],
  });
  const receiver = useReceivers();

  const accountPushingTo = (target: TestReceiver | string, contentType?: PushContentType): Promise<TestAccount> => pushingAccount(configApi, worker.app, target, contentType);

  async function settled(events: StoredTestEvent[], statuses: string[] = ['delivered', 'failed', 'filtered', 'no_endpoint'], app: RunningApp = worker) {
    const ids = events.map((event) => event.eventId);
    return waitFor(
      `events ${ids.join(', ')} to reach ${statuses.join('/')}`,
      async () => {
        const rows = await eventRows(app.app, ids);
        return rows.length === ids.length && rows.every((row) => statuses.includes(row.status)) ? rows : undefined;
      },
      { timeoutMs: SETTLE_DEADLINE_MS },
    );
  }

  it.each([
    ['JSON', 'application/json'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
  ] as const)('delivers every action as %s, signed so Standard Webhooks verifies it', async (contentType, mediaType) => {
    const target = await receiver();
    const account = await accountPushingTo(target, contentType);
    const events = await sendEvents(worker.app, account.id, EVENT_ACTIONS.map(sample));
    const rows = await settled(events);

    expect(rows.map((row) => row.status)).toEqual(events.map(() => 'delivered'));
    expect(rows.every((row) => row.attempts === 1 && row.delivered_at !== null && row.last_error === null)).toBe(true);
    expect(target.requests).toHaveLength(events.length);
    const verifier = new Webhook(account.signing_secret);
    for (const event of events) {
      const request = target.requests.find((candidate) => header(candidate, 'webhook-id') === event.eventId);
      if (!request) throw new Error(`no request for ${event.action}`);
      expect(request.method).toBe('POST');
      expect(header(request, 'content-type')).toBe(mediaType);
      expect(header(request, 'user-agent')).toMatch(/^event-callbacks\/\d+\.\d+\.\d+/);
      expect(header(request, 'webhook-signature').split(' ')).toHaveLength(1);
      expect(() => verifier.verify(request.body, webhookHeaders(request), { jsonParse: false })).not.toThrow();
      if (contentType === 'JSON') {
        expect(request.body).toBe(JSON.stringify({ action: event.action, message: event.message }));
      } else {
        expect(parseFormBody(request.body)).toEqual({ action: event.action, message: asFormParsed(event.message) });
      }
      // The attempt row holds exactly what was sent, and no secret.
      const [attempt] = await attemptRows(worker.app, event.eventId);
      expect(attempt).toMatchObject({ attempt: 1, series: 0, url: target.url, request_body: request.body, response_status: 200, error: null });
      expect(attempt.request_headers['webhook-signature']).toBe(header(request, 'webhook-signature'));
      expect(JSON.stringify(attempt.request_headers)).not.toContain('whsec_');
      // Shown as sent, those the row keeps and those rebuilt from it and the event (content type, id, timestamp) alike.
      const sentNames = ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];
      expect(Object.keys(attempt.request_headers).slice(0, sentNames.length)).toEqual(sentNames);
      for (const name of sentNames) expect(attempt.request_headers[name]).toBe(header(request, name));
      const [stored] = await worker.app.get(DataSource).query<{ headers: Record<string, string> }[]>(
        `SELECT a.request_headers AS headers FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq WHERE e.event_id = $1`,
        [event.eventId],
      );
      expect(Object.keys(stored.headers)).not.toContain('webhook-id');
    }
  });

  it('filters events whose permission is off and marks accounts without a push_url, without any HTTP call', async () => {
    const target = await receiver();
    const filteredAccount = await createAccount(configApi);
    await setCallbackSettings(worker.app, filteredAccount.id, { pushUrl: target.url, permissions: { customer_update: true } });
    const noEndpointAccount = await createAccount(configApi);
    await setCallbackSettings(worker.app, noEndpointAccount.id, { permissions: 'all' });

    const filtered = await sendEvents(worker.app, filteredAccount.id, [sample('Customer_create'), sample('ShutQueue_create')]);
    const noEndpoint = await sendEvents(worker.app, noEndpointAccount.id, [sample('Customer_create')]);
    const allowed = await sendEvents(worker.app, filteredAccount.id, [sample('Customer_update')]);
    await settled([...filtered, ...noEndpoint, ...allowed]);

    expect((await eventRows(worker.app, filtered.map((event) => event.eventId))).map((row) => [row.status, row.attempts])).toEqual([
      ['filtered', 0],
      ['filtered', 0],
    ]);
    expect(await eventRow(worker.app, noEndpoint[0].eventId)).toMatchObject({ status: 'no_endpoint', attempts: 0 });
    expect(await attemptRows(worker.app, filtered[0].eventId)).toEqual([]);
    // The one permitted event went out; the others never did.
    expect(target.requests.map((request) => header(request, 'webhook-id'))).toEqual([allowed[0].eventId]);
  });

  it('picks up a settings change in the running worker through the settings channel', async () => {
    const first = await receiver();
    const second = await receiver();
    const account = await accountPushingTo(first, 'JSON');
    const [warmup] = await sendEvents(worker.app, account.id, [sample('Customer_create')]);
    await settled([warmup]);
    expect(first.requests).toHaveLength(1);

    // The worker now holds the account in memory for 30 s; only the notification can make it see these changes.
    await setCallbackSettings(worker.app, account.id, { permissions: { customer_update: true } });
    const [filtered] = await sendEvents(worker.app, account.id, [sample('Customer_create')]);
    const [row] = await settled([filtered]);
    expect(row.status).toBe('filtered');

    await setCallbackSettings(worker.app, account.id, {
      pushUrl: second.url,
      contentType: 'application/x-www-form-urlencoded',
      permissions: 'all',
    });
    // Only the notice can show the worker the new URL before its 30 s safety TTL, and this wait is shorter. On a Redis
    // Cluster a PUBLISH reaches subscribers on other nodes over the cluster bus, after the publisher's call returns,
    // so the event is sent once the worker has heard it rather than racing it.
    const cache = worker.app.get(DestinationSettingsCache);
    await waitFor('the worker to hear of the new push URL', async () => (await cache.get(account.id, 'primary'))?.url === second.url, { timeoutMs: SETTINGS_TTL_MS / 2 });
    const [moved] = await sendEvents(worker.app, account.id, [sample('Customer_create')]);
    await settled([moved]);
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(header(second.requests[0], 'content-type')).toBe('application/x-www-form-urlencoded');
  });

  it('signs with both secrets during a rotation, each verifiable on its own', async () => {
    const target = await receiver();
    const account = await accountPushingTo(target, 'JSON');
    const [before] = await sendEvents(worker.app, account.id, [sample('Organization_create')]);
    await settled([before]);

    const rotated = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/rotate-secret`, { method: 'POST', headers: ADMIN_HEADERS });
    expect(rotated.status).toBe(200);
    const { signing_secret: newSecret } = (await rotated.json()) as { signing_secret: string };
    expect(newSecret).not.toBe(account.signing_secret);

    const [after] = await sendEvents(worker.app, account.id, [sample('Organization_create')]);
    await settled([after]);
    const request = target.requests.find((candidate) => header(candidate, 'webhook-id') === after.eventId);
    if (!request) throw new Error('the event after the rotation was not received');
    const signatures = header(request, 'webhook-signature').split(' ');
    expect(signatures).toHaveLength(2);
    for (const secret of [newSecret, account.signing_secret]) {
      expect(() => new Webhook(secret).verify(request.body, webhookHeaders(request))).not.toThrow();
    }
    // Each signature alone verifies with exactly one of the secrets.
    const [currentSignature, previousSignature] = signatures;
    const only = (signature: string) => ({ ...webhookHeaders(request), 'webhook-signature': signature });
    expect(() => new Webhook(newSecret).verify(request.body, only(currentSignature))).not.toThrow();
    expect(() => new Webhook(account.signing_secret).verify(request.body, only(previousSignature))).not.toThrow();
    expect(() => new Webhook(newSecret).verify(request.body, only(previousSignature))).toThrow();
  });

  it('retries per schedule until a 2xx, with the same webhook-id and a fresh signature each time', async () => {
    const target = await receiver();
    target.respondWith((_request, response) => {
      response.writeHead(target.requests.length <= 2 ? 500 : 200, { 'content-type': 'text/plain' }).end(target.requests.length <= 2 ? 'boom' : 'ok');
    });
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('Customer_update')]);
    const [row] = await settled([event]);

    expect(row).toMatchObject({ status: 'delivered', attempts: 3, series_attempts: 3, last_error: null });
    const attempts = await attemptRows(worker.app, event.eventId);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.response_status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(attempts[0].error).toBe('HTTP 500: server error');
    expect(attempts[0].response_body).toBe('boom');
    expect(target.requests.map((request) => header(request, 'webhook-id'))).toEqual([event.eventId, event.eventId, event.eventId]);
    const verifier = new Webhook(account.signing_secret);
    for (const request of target.requests) expect(() => verifier.verify(request.body, webhookHeaders(request))).not.toThrow();
    // The schedule's first delay (200 ms, jittered ±15 %) separates the first two attempts.
    expect(target.requests[1].receivedAt - target.requests[0].receivedAt).toBeGreaterThanOrEqual(150);
  });

  it('marks the event failed once the schedule is exhausted', async () => {
    const target = await receiver();
    target.respondStatus(503);
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('Customer_destroy')]);
    await waitFor('a retrying status on the way', async () => (await eventRow(worker.app, event.eventId)).status === 'retrying');
    const [row] = await settled([event]);

    expect(row).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null, delivered_at: null });
    expect(row.last_error).toBe('HTTP 503: server error (retryable); retries exhausted after 3 attempts');
    expect(target.requests).toHaveLength(3);
    expect((await attemptRows(worker.app, event.eventId)).map((attempt) => attempt.response_status)).toEqual([503, 503, 503]);
  });

  it('does not follow redirects: a 302 is a failed attempt and its Location is never requested', async () => {
    const elsewhere = await receiver();
    const target = await receiver();
    target.respondStatus(302, { location: elsewhere.url });
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('AgentNote_update')]);
    const [row] = await settled([event]);

    expect(row.status).toBe('failed');
    expect(row.last_error).toContain('HTTP 302: redirect not followed (permanent)');
    const attempts = await attemptRows(worker.app, event.eventId);
    expect(attempts.map((attempt) => attempt.response_status)).toEqual([302, 302, 302]);
    expect(attempts[0].response_headers?.location).toBe(elsewhere.url);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('honours Retry-After on a 429', async () => {
    const target = await receiver();
    target.respondWith((_request, response) => {
      if (target.requests.length === 1) response.writeHead(429, { 'retry-after': '2' }).end('slow down');
      else response.writeHead(204).end();
    });
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('Organization_update')]);
    const retrying = await waitFor('the throttled attempt to be recorded', async () => {
      const row = await eventRow(worker.app, event.eventId);
      return row.status === 'retrying' ? row : undefined;
    });
    expect(retrying.last_error).toMatch(/^HTTP 429: too many requests \(throttled, Retry-After 2 s\); next attempt in 2000 ms$/);
    const [row] = await settled([event]);

    expect(row.status).toBe('delivered');
    expect(target.requests).toHaveLength(2);
    // The schedule says 200 ms; the receiver asked for 2 s and got it.
    expect(target.requests[1].receivedAt - target.requests[0].receivedAt).toBeGreaterThanOrEqual(1900);
  });

  it('stores at most 4 KiB of a response body', async () => {
    const target = await receiver();
    target.respondStatus(200, { 'content-type': 'text/plain' }, 'x'.repeat(10_000));
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('Customer_create')]);
    await settled([event]);
    const [attempt] = await attemptRows(worker.app, event.eventId);
    expect(attempt.response_status).toBe(200);
    expect(attempt.response_body).toBe('x'.repeat(4096));
  });

  it('starts a new attempt series on redelivery, and leaves jobs of the old series alone', async () => {
    const target = await receiver();
    const account = await accountPushingTo(target);
    const [event] = await sendEvents(worker.app, account.id, [sample('ImSubSession_create')]);
    await settled([event]);

    const redelivered = await fetch(`${configApi.url}/admin/v1/events/${event.eventId}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS });
    expect(redelivered.status).toBe(202);
    await waitFor('the second series to be delivered', async () => {
      const row = await eventRow(worker.app, event.eventId);
      return row.series === 1 && row.status === 'delivered';
    });
    // A leftover job of series 0 (say, re-added by a reconciler) is stale now.
    const queues = deliveryQueueOf(worker.app);
    const stale = { eventSeq: event.seq, accountId: event.accountId, series: 0, attempt: 0 };
    await queues.addBulk([stale]);
    await waitFor('the stale job to be processed', async () => (await queues.queueFor(stale.accountId).getJob(deliveryJobId(stale))) === undefined);

    expect(await eventRow(worker.app, event.eventId)).toMatchObject({ status: 'delivered', attempts: 2, series: 1, series_attempts: 1 });
    expect((await attemptRows(worker.app, event.eventId)).map((attempt) => [attempt.series, attempt.attempt, attempt.response_status])).toEqual([
      [0, 1, 200],
      [1, 2, 200],
    ]);
    expect(target.requests.map((request) => header(request, 'webhook-id'))).toEqual([event.eventId, event.eventId]);
  });

  describe('with a 500 ms deadline', () => {
    const { deadlineWorker } = useApps({
      deadlineWorker: [
        DeliveryWorkerModule,
        // Its own prefix, hence its own queue: the main worker above (10 s deadline) must not take these jobs.
        { REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? ''}-deadline`, RETRY_SCHEDULE: '200ms,400ms', DELIVERY_TIMEOUT_MS: '500', RECONCILE_INTERVAL: '1m' },
      ],
    });

    it('gives up on a receiver that never answers at the deadline and says so', async () => {
      const target = await receiver();
      target.respondWith(() => undefined);
      const account = await createAccount(configApi);
      await setCallbackSettings(deadlineWorker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
      const [event] = await sendEvents(deadlineWorker.app, account.id, [sample('ImSurveyVote_create')]);
      const attempts = await waitFor('the first attempt to be recorded', async () => {
        const rows = await attemptRows(deadlineWorker.app, event.eventId);
        return rows.length > 0 ? rows : undefined;
      });
      expect(attempts[0]).toMatchObject({ response_status: null, response_body: null, error: 'time-out: no answer within 500 ms' });
      expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(450);
      const [row] = await settled([event], undefined, deadlineWorker);
      expect(row.status).toBe('failed');
      expect(row.last_error).toMatch(/^time-out: no answer within 500 ms \(retryable\)/);
      expect(target.requests).toHaveLength(3);
    });
  });

  describe('with ALLOW_PRIVATE_TARGETS=false', () => {
    const { strictWorker } = useApps({
      strictWorker: [
        DeliveryWorkerModule,
        // Its own prefix, hence its own queue: the main worker above must not take these jobs.
        { ALLOW_PRIVATE_TARGETS: 'false', REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? ''}-strict`, RETRY_SCHEDULE: '100ms', RECONCILE_INTERVAL: '1m' },
      ],
    });

    it('refuses a loopback target and never calls it', async () => {
      const target = await receiver();
      const account = await createAccount(configApi);
      // Written straight to the database: the config API would refuse this URL in the first place.
      await setCallbackSettings(strictWorker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
      const [event] = await sendEvents(strictWorker.app, account.id, [sample('Customer_create')]);
      const row = await waitFor('the refused event to fail', async () => {
        const current = await eventRow(strictWorker.app, event.eventId);
        return current.status === 'failed' ? current : undefined;
      });
      expect(row.attempts).toBe(2);
      expect(row.last_error).toMatch(/^refused: 127\.0\.0\.1 is not a public address \(permanent\)/);
      const attempts = await attemptRows(strictWorker.app, event.eventId);
      expect(attempts.map((attempt) => [attempt.response_status, attempt.error])).toEqual([
        [null, 'refused: 127.0.0.1 is not a public address'],
        [null, 'refused: 127.0.0.1 is not a public address'],
      ]);
      expect(target.requests).toHaveLength(0);
    });
  });
});
