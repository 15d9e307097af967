import { DelayedError } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { loadEnvironment, OutboundError, type OutboundRequest, type OutboundResponse } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import type { AccountDeliverySettings, AccountSettingsCache } from './account-settings.cache';
import { type DeliveryJob, DeliveryService } from './delivery.service';
import type { DeliveryStore, Outcome, PendingEvent } from './delivery-store';
import type { Admission, EndpointGuard, EndpointLease } from './endpoint-guard';

/**
 * The delivery decisions with in-memory collaborators: no PostgreSQL, Redis or network. The e2e
 * suites (test/delivery*.e2e-spec.ts) run the same code against the real ones.
 */

const SECRET = generateSigningSecret();

function pendingEvent(overrides: Partial<PendingEvent> = {}): PendingEvent {
  return {
    seq: '42',
    eventId: 'evt-42',
    accountId: 7,
    action: 'Customer_create',
    messageText: '{"id":1,"tags":["vip"]}',
    status: 'queued',
    attempts: 0,
    series: 0,
    seriesAttempts: 0,
    createdAt: new Date(Date.now() - 1000),
    ...overrides,
  };
}

function accountSettings(overrides: Partial<AccountDeliverySettings> = {}): AccountDeliverySettings {
  return {
    accountId: 7,
    pushUrl: 'https://receiver.example/hook',
    encoding: 'json',
    permissions: { customer_create: true },
    signingSecret: SECRET,
    previousSigningSecret: null,
    previousSecretExpiresAt: null,
    ...overrides,
  };
}

class Fakes {
  event: PendingEvent | null | Error = pendingEvent();
  settings: AccountDeliverySettings | null = accountSettings();
  admission: Admission = { kind: 'admitted', lease: { endpointKey: 'https://receiver.example', id: 'lease-1', probe: false } };
  answer: OutboundResponse | Error = { status: 200, headers: {}, body: 'ok', truncated: false };
  applied = true;
  readonly recorded: Outcome[] = [];
  readonly released: { lease: EndpointLease; signal: string; error: string | null }[] = [];
  readonly requests: OutboundRequest[] = [];
  readonly added: { name: string; data: unknown; opts: { jobId?: string; delay?: number } }[] = [];
  readonly delayedTo: number[] = [];

  service(schedule = '10s,1m'): DeliveryService {
    const environment = loadEnvironment({ RETRY_SCHEDULE: schedule, DELIVERY_TIMEOUT_MS: '1000', BREAKER_COOLDOWN: '30s' });
    const store = {
      loadEvent: () => (this.event instanceof Error ? Promise.reject(this.event) : Promise.resolve(this.event)),
      record: (outcome: Outcome) => {
        this.recorded.push(outcome);
        return Promise.resolve(this.applied);
      },
    } as unknown as DeliveryStore;
    const cache = { get: () => Promise.resolve(this.settings) } as unknown as AccountSettingsCache;
    const guard = {
      acquire: () => Promise.resolve(this.admission),
      isLocallyFull: () => false,
      busyDelayMs: () => 150,
      release: (lease: EndpointLease, signal: string, error: string | null) => {
        this.released.push({ lease, signal, error });
        return Promise.resolve({ change: 'unchanged', consecutiveFailures: 0, retryAt: null });
      },
    } as unknown as EndpointGuard;
    const http = {
      post: (request: OutboundRequest) => {
        this.requests.push(request);
        return this.answer instanceof Error ? Promise.reject(this.answer) : Promise.resolve(this.answer);
      },
    };
    const queue = {
      add: (name: string, data: unknown, opts: { jobId?: string; delay?: number }) => {
        this.added.push({ name, data, opts });
        return Promise.resolve({});
      },
    };
    return new DeliveryService(store, cache, guard, http, queue as never, environment);
  }

  job(attempt = 0, series = 0): DeliveryJob {
    return {
      data: { eventSeq: '42', series, attempt },
      attemptsStarted: 1,
      moveToDelayed: (timestamp: number) => {
        this.delayedTo.push(timestamp);
        return Promise.resolve();
      },
    };
  }
}

describe('DeliveryService', () => {
  it('does nothing for a job whose step the row has left behind', async () => {
    for (const event of [null, pendingEvent({ status: 'delivered' }), pendingEvent({ series: 1 }), pendingEvent({ seriesAttempts: 1 })]) {
      const fakes = new Fakes();
      fakes.event = event;
      await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('stale');
      expect(fakes.requests).toHaveLength(0);
      expect(fakes.recorded).toHaveLength(0);
    }
  });

  it('records no_endpoint and filtered without calling anyone', async () => {
    const noUrl = new Fakes();
    noUrl.settings = accountSettings({ pushUrl: null });
    await expect(noUrl.service().deliver(noUrl.job(), 'token')).resolves.toBe('no_endpoint');
    expect(noUrl.recorded[0]).toMatchObject({ attempt: null, change: { status: 'no_endpoint', attempted: 0, seriesAttempts: 0 } });

    const off = new Fakes();
    off.settings = accountSettings({ permissions: { customer_create: false, customer_update: true } });
    await expect(off.service().deliver(off.job(), 'token')).resolves.toBe('filtered');
    expect(off.recorded[0].change).toMatchObject({ status: 'filtered', lastError: 'permission customer_create is off' });
    expect([...noUrl.requests, ...off.requests]).toHaveLength(0);
  });

  it('signs the exact bytes it sends and records them on success', async () => {
    const fakes = new Fakes();
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('delivered');
    const [request] = fakes.requests;
    expect(request.body).toBe('{"action":"Customer_create","message":{"id":1,"tags":["vip"]}}');
    expect(request.headers['webhook-id']).toBe('evt-42');
    expect(() => new Webhook(SECRET).verify(request.body, request.headers)).not.toThrow();
    expect(fakes.released).toEqual([{ lease: expect.objectContaining({ id: 'lease-1' }), signal: 'success', error: null }]);
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 1, requestBody: request.body, requestHeaders: request.headers, responseStatus: 200, error: null },
      change: { status: 'delivered', attempted: 1, lastError: null, nextAttemptAt: null },
    });
    expect(fakes.added).toHaveLength(0);
  });

  it('writes retrying with next_attempt_at, then enqueues the next step with the jittered delay', async () => {
    const fakes = new Fakes();
    fakes.answer = { status: 500, headers: {}, body: 'boom', truncated: false };
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('retrying');
    const { change } = fakes.recorded[0];
    expect(change).toMatchObject({ status: 'retrying', attempted: 1 });
    expect(change.lastError).toMatch(/^HTTP 500: server error \(retryable\); next attempt in \d+ ms$/);
    const [next] = fakes.added;
    expect(next.data).toEqual({ eventSeq: '42', series: 0, attempt: 1 });
    expect(next.opts.jobId).toBe('e42-s0-a1');
    expect(next.opts.delay).toBeGreaterThanOrEqual(8500);
    expect(next.opts.delay).toBeLessThanOrEqual(11_500);
    expect(Math.abs((change.nextAttemptAt?.getTime() ?? 0) - Date.now() - (next.opts.delay ?? 0))).toBeLessThan(1000);
    expect(fakes.released[0].signal).toBe('failure');
  });

  it('fails the event after the last scheduled attempt and enqueues nothing', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 2, seriesAttempts: 2, status: 'retrying' });
    fakes.answer = new OutboundError('timeout', 'no answer within 1000 ms');
    await expect(fakes.service().deliver(fakes.job(2), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 3, responseStatus: null, error: 'time-out: no answer within 1000 ms' },
      change: { status: 'failed', lastError: 'time-out: no answer within 1000 ms (retryable); retries exhausted after 3 attempts' },
    });
    expect(fakes.added).toHaveLength(0);
  });

  it('does not schedule a retry when the row moved on while the call was made', async () => {
    const fakes = new Fakes();
    fakes.answer = { status: 502, headers: {}, body: '', truncated: false };
    fakes.applied = false;
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('superseded');
    expect(fakes.added).toHaveLength(0);
  });

  it('moves the job to later without an attempt when the endpoint has no free slot', async () => {
    const fakes = new Fakes();
    fakes.admission = { kind: 'busy' };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 150);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(0);
  });

  it('waits out an open breaker, telling the event why, without spending an attempt', async () => {
    const fakes = new Fakes();
    const retryAt = new Date(Date.now() + 20_000);
    fakes.admission = { kind: 'open', waitMs: 20_000, retryAt, consecutiveFailures: 5, lastError: 'HTTP 503: server error', probing: false };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 20_000);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({
      status: null,
      attempted: 0,
      lastError: `circuit open until ${retryAt.toISOString()} after 5 consecutive failures: HTTP 503: server error`,
    });
    expect(fakes.requests).toHaveLength(0);
  });

  it('keeps the job for later when PostgreSQL is unavailable, and fails it on any other error', async () => {
    const away = new Fakes();
    away.event = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const before = Date.now();
    await expect(away.service().deliver(away.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(away.delayedTo[0]).toBeGreaterThanOrEqual(before + 2500);

    const bug = new Fakes();
    bug.event = new Error('column "nope" does not exist');
    await expect(bug.service().deliver(bug.job(), 'token')).rejects.toThrow('column "nope" does not exist');
    expect(bug.delayedTo).toHaveLength(0);
  });

  it('frees the slot when something breaks before the call', async () => {
    const fakes = new Fakes();
    // A secret that cannot be used makes signing throw after the slot was taken.
    fakes.settings = accountSettings({ signingSecret: null as unknown as string });
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toThrow();
    expect(fakes.released).toEqual([{ lease: expect.objectContaining({ id: 'lease-1' }), signal: 'neutral', error: null }]);
  });

  it('signs with both secrets while the previous one has not expired', async () => {
    const previous = generateSigningSecret();
    const fakes = new Fakes();
    fakes.settings = accountSettings({ previousSigningSecret: previous, previousSecretExpiresAt: Date.now() + 60_000 });
    await fakes.service().deliver(fakes.job(), 'token');
    const [request] = fakes.requests;
    expect(request.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(request.body, request.headers)).not.toThrow();

    const expired = new Fakes();
    expired.settings = accountSettings({ previousSigningSecret: previous, previousSecretExpiresAt: Date.now() - 1 });
    await expired.service().deliver(expired.job(), 'token');
    expect(expired.requests[0].headers['webhook-signature'].split(' ')).toHaveLength(1);
  });
});
