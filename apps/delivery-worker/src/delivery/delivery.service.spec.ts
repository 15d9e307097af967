import { DelayedError } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { type DeliveryJobData, deliveryJob, loadEnvironment, OutboundError, type OutboundRequest, type OutboundResponse } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import type { AccountDeliverySettings, AccountSettingsCache } from './account-settings.cache';
import { type DeliveryJob, DeliveryService } from './delivery.service';
import { OutcomeRecorder } from './outcome/outcome-recorder.service';
import type { DeliveryStore, Outcome, PendingEvent } from './outcome/delivery-store';
import { CallTurns } from './admission/call-turns';
import type { Admission, EndpointAdmission, EndpointLease } from './admission/endpoint-admission';
import type { EndpointDisabling } from './admission/endpoint-disabling';
import type { SubjectOrder } from './admission/subject-order';

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
    test: false,
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
    failingSince: null,
    disabledAt: null,
    disabledReason: null,
    ordering: 'none',
    maxPerSecond: null,
    ...overrides,
  };
}

class Fakes {
  event: PendingEvent | null | Error = pendingEvent();
  settings: AccountDeliverySettings | null = accountSettings();
  admission: Admission = { kind: 'admitted', lease: { endpointKey: 'https://receiver.example', id: 'lease-1', probe: false, maxPerSecond: null } };
  /** `hang`: the receiver never answers. */
  answer: OutboundResponse | Error | 'hang' = { status: 200, headers: {}, body: 'ok', truncated: false };
  applied = true;
  readonly recorded: Outcome[] = [];
  readonly released: { lease: EndpointLease; signal: string; error: string | null }[] = [];
  readonly requests: OutboundRequest[] = [];
  readonly added: { name: string; data: unknown; opts: { jobId?: string; delay?: number } }[] = [];
  readonly delayedTo: number[] = [];
  readonly forced: boolean[] = [];
  readonly health: { success: boolean }[] = [];
  /** What EndpointDisabling.disabled answers: null while the endpoint is enabled. */
  disabled: AccountDeliverySettings | null = null;
  /** What SubjectOrder.holdMs answers: null when no earlier event of the subject is pending. */
  heldMs: number | null = null;
  /** The events SubjectOrder.release was asked to release the next of. */
  readonly releasedAfter: string[] = [];

  service(schedule = '10s,1m'): DeliveryService {
    const environment = loadEnvironment({ RETRY_SCHEDULE: schedule, DELIVERY_TIMEOUT_MS: '1000', BREAKER_COOLDOWN: '30s' });
    const store = {
      loadEvent: () => (this.event instanceof Error ? Promise.reject(this.event) : Promise.resolve(this.event)),
      loadOrderedEvent: () => (this.event instanceof Error ? Promise.reject(this.event) : Promise.resolve(this.event && { event: this.event, ahead: undefined })),
      record: (outcome: Outcome) => {
        this.recorded.push(outcome);
        return Promise.resolve(this.applied);
      },
    } as unknown as DeliveryStore;
    const cache = { get: () => Promise.resolve(this.settings) } as unknown as AccountSettingsCache;
    const guard = {
      acquire: ({ force }: { force: boolean }) => {
        this.forced.push(force);
        return Promise.resolve(this.admission);
      },
      turns: new CallTurns(50),
      isLocallyFull: () => false,
      busyDelayMs: (_endpointKey: string, pace: { waitMs: number } | null) => pace?.waitMs ?? 150,
      indexChange: () => Promise.resolve(),
      release: (lease: EndpointLease, signal: string, error: string | null) => {
        this.released.push({ lease, signal, error });
        return Promise.resolve({ change: 'unchanged', consecutiveFailures: 0, retryAt: null });
      },
    } as unknown as EndpointAdmission;
    const http = {
      post: (request: OutboundRequest) => {
        this.requests.push(request);
        const answer = this.answer;
        if (answer === 'hang') return new Promise<never>(() => undefined);
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    };
    const queues = {
      addBulk: (steps: DeliveryJobData[], delays: number[]) => {
        steps.forEach((step, index) => this.added.push(deliveryJob(step, delays[index])));
        return Promise.resolve();
      },
    };
    const health = {
      disabled: () => Promise.resolve(this.disabled),
      noteOutcome: (_settings: AccountDeliverySettings, success: boolean) => {
        this.health.push({ success });
        return Promise.resolve();
      },
    } as unknown as EndpointDisabling;
    const order = {
      holdMs: () => Promise.resolve(this.heldMs),
      afterHold: () => Promise.resolve(),
      startWorking: () => () => undefined,
      release: (event: PendingEvent) => {
        this.releasedAfter.push(event.seq);
        return Promise.resolve();
      },
    } as unknown as SubjectOrder;
    return new DeliveryService(store, cache, guard, http, new OutcomeRecorder(store, queues as never, environment, health), environment, health, order);
  }

  job(attempt = 0, series = 0): DeliveryJob {
    return {
      data: { eventSeq: '42', accountId: 7, series, attempt },
      attemptsStarted: 1,
      moveToDelayed: (timestamp: number) => {
        this.delayedTo.push(timestamp);
        return Promise.resolve();
      },
    };
  }
}

describe('DeliveryService', () => {
  it('ends an event whose body cannot be encoded failed, saying why, without a call', async () => {
    const fakes = new Fakes();
    fakes.settings = accountSettings({ encoding: 'form' });
    fakes.event = pendingEvent({ messageText: '{"id":' });
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('failed');
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(1);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/^cannot encode the callback body \(form\): /);
  });

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

  it('calls for a test event even when its permission is off, and still needs a push_url', async () => {
    const test = new Fakes();
    test.event = pendingEvent({ test: true });
    test.settings = accountSettings({ permissions: { customer_create: false } });
    await expect(test.service().deliver(test.job(), 'token')).resolves.toBe('delivered');
    expect(test.requests).toHaveLength(1);

    const noUrl = new Fakes();
    noUrl.event = pendingEvent({ test: true });
    noUrl.settings = accountSettings({ pushUrl: null });
    await expect(noUrl.service().deliver(noUrl.job(), 'token')).resolves.toBe('no_endpoint');
    expect(noUrl.requests).toHaveLength(0);
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
    expect(next.data).toEqual({ eventSeq: '42', accountId: 7, series: 0, attempt: 1 });
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
    fakes.admission = { kind: 'busy', pace: null };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 150);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(0);
  });

  it('waits for the endpoint pace without an attempt, until its place in the pace\'s line', async () => {
    const fakes = new Fakes();
    fakes.admission = { kind: 'busy', pace: { waitMs: 2000, intervalMs: 100, climbPerSecond: 0, ceilingPerSecond: Infinity } };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 2000);
    expect(fakes.delayedTo[0]).toBeLessThanOrEqual(Date.now() + 2400);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(0);
  });

  it('holds an event behind an earlier pending event of its subject without an attempt; a manual redelivery goes at once', async () => {
    const held = new Fakes();
    held.settings = accountSettings({ ordering: 'subject' });
    held.heldMs = 700;
    const before = Date.now();
    await expect(held.service().deliver(held.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(held.delayedTo[0]).toBeGreaterThanOrEqual(before + 700);
    expect(held.requests).toHaveLength(0);
    expect(held.recorded).toHaveLength(0);

    const redelivered = new Fakes();
    redelivered.settings = accountSettings({ ordering: 'subject' });
    redelivered.heldMs = 700;
    redelivered.event = pendingEvent({ series: 1, seriesAttempts: 0, attempts: 3 });
    await expect(redelivered.service().deliver(redelivered.job(0, 1), 'token')).resolves.toBe('delivered');
    expect(redelivered.requests).toHaveLength(1);

    const unordered = new Fakes();
    unordered.heldMs = 700;
    await expect(unordered.service().deliver(unordered.job(), 'token')).resolves.toBe('delivered');
  });

  it('releases the next event of an ordered subject when an event ends, never while it only goes to retrying', async () => {
    const ends = async (setup: (fakes: Fakes) => void): Promise<string[]> => {
      const fakes = new Fakes();
      fakes.settings = accountSettings({ ordering: 'subject' });
      setup(fakes);
      await fakes.service().deliver(fakes.job(), 'token');
      return fakes.releasedAfter;
    };
    expect(await ends(() => undefined)).toEqual(['42']);
    expect(await ends((fakes) => (fakes.settings = accountSettings({ ordering: 'subject', permissions: {} })))).toEqual(['42']);
    expect(await ends((fakes) => (fakes.answer = { status: 500, headers: {}, body: '', truncated: false }))).toEqual([]);
    expect(await ends((fakes) => (fakes.applied = false))).toEqual([]);
    expect(await ends((fakes) => (fakes.settings = accountSettings()))).toEqual([]);
  });

  it('records an attempt due while the breaker is open as failed without a call, and keeps to the schedule', async () => {
    const fakes = new Fakes();
    const retryAt = new Date(Date.now() + 20_000);
    fakes.admission = { kind: 'open', waitMs: 20_000, retryAt, consecutiveFailures: 5, lastError: 'HTTP 503: server error', probing: false };
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('retrying');
    const circuit = `circuit open until ${retryAt.toISOString()} after 5 consecutive failures: HTTP 503: server error`;
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 1, durationMs: 0, requestHeaders: {}, requestBody: '', responseStatus: null, error: circuit },
      change: { status: 'retrying', attempted: 1 },
    });
    expect(fakes.recorded[0].change.lastError).toMatch(new RegExp(`^${circuit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(retryable\\); next attempt in \\d+ ms$`));
    // The next attempt follows RETRY_SCHEDULE (10s ±15 %), not the breaker's cooldown.
    expect(fakes.added[0].opts.delay).toBeGreaterThanOrEqual(8500);
    expect(fakes.added[0].opts.delay).toBeLessThanOrEqual(11_500);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.released).toHaveLength(0);
    expect(fakes.delayedTo).toHaveLength(0);
    // A skipped attempt counts as failed for the endpoint's disabling clock.
    expect(fakes.health).toEqual([{ success: false }]);
  });

  it('fails the event when its last attempt falls due while the breaker is open', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 2, seriesAttempts: 2, status: 'retrying' });
    fakes.admission = { kind: 'open', waitMs: 5000, retryAt: new Date(Date.now() + 5000), consecutiveFailures: 7, lastError: null, probing: false };
    await expect(fakes.service().deliver(fakes.job(2), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0].attempt).toMatchObject({ attempt: 3, error: expect.stringMatching(/^circuit open until \S+ after 7 consecutive failures$/) });
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', attempted: 1, nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/; retries exhausted after 3 attempts$/);
    expect(fakes.added).toHaveLength(0);
    expect(fakes.requests).toHaveLength(0);
  });

  it('waits for another worker\'s half-open probe without spending an attempt', async () => {
    const fakes = new Fakes();
    fakes.admission = { kind: 'open', waitMs: 2000, retryAt: new Date(Date.now() + 2000), consecutiveFailures: 5, lastError: null, probing: true };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 1000);
    expect(fakes.delayedTo[0]).toBeLessThanOrEqual(Date.now() + 2000);
    expect(fakes.recorded).toHaveLength(0);
    expect(fakes.requests).toHaveLength(0);
  });

  it('forces the first call of a manual redelivery through the breaker, and only that one', async () => {
    const redelivered = new Fakes();
    redelivered.event = pendingEvent({ attempts: 4, series: 1, seriesAttempts: 0 });
    await expect(redelivered.service().deliver(redelivered.job(0, 1), 'token')).resolves.toBe('delivered');
    expect(redelivered.forced).toEqual([true]);
    expect(redelivered.recorded[0].attempt).toMatchObject({ series: 1, attempt: 5 });

    const retry = new Fakes();
    retry.event = pendingEvent({ attempts: 5, series: 1, seriesAttempts: 1, status: 'retrying' });
    await retry.service().deliver(retry.job(1, 1), 'token');
    const first = new Fakes();
    await first.service().deliver(first.job(), 'token');
    expect([...retry.forced, ...first.forced]).toEqual([false, false]);
  });

  it('ends an event failed at once, without a call, when its endpoint is disabled', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 8, series: 1, seriesAttempts: 0 });
    fakes.disabled = accountSettings({ disabledAt: new Date('2026-01-02T03:04:05.000Z'), disabledReason: 'every attempt since … failed' });
    await expect(fakes.service().deliver(fakes.job(0, 1), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0]).toMatchObject({ attempt: null, change: { status: 'failed', attempted: 0, nextAttemptAt: null } });
    expect(fakes.recorded[0].change.lastError).toBe(
      'endpoint disabled since 2026-01-02T03:04:05.000Z (every attempt since … failed); no call made. ' +
        'Enable it (POST /admin/v1/accounts/7/endpoint/enable, or set_url), then redeliver',
    );
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.forced).toHaveLength(0);
  });

  it('tells the endpoint health about calls made, but not about calls abandoned at shutdown', async () => {
    const ok = new Fakes();
    await ok.service().deliver(ok.job(), 'token');
    const failed = new Fakes();
    failed.answer = { status: 404, headers: {}, body: '', truncated: false };
    await failed.service().deliver(failed.job(), 'token');
    expect([...ok.health, ...failed.health]).toEqual([{ success: true }, { success: false }]);

    const stuck = new Fakes();
    const service = stuck.service();
    stuck.answer = 'hang';
    const delivering = service.deliver(stuck.job(), 'token');
    await new Promise((resolve) => setImmediate(resolve));
    expect(service.abandonInFlight()).toBe(1);
    await expect(delivering).resolves.toBe('retrying');
    expect(stuck.recorded[0].attempt?.error).toBe('connection failed: abandoned: the worker shut down before the receiver answered');
    expect(stuck.released[0].signal).toBe('neutral');
    expect(stuck.health).toHaveLength(0);
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

  it('frees the slot when signing breaks before the call, and ends the event failed saying why (CONTRACT §5)', async () => {
    const fakes = new Fakes();
    // A secret that cannot be used makes signing throw after the slot was taken.
    fakes.settings = accountSettings({ signingSecret: null as unknown as string });
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('failed');
    expect(fakes.released).toEqual([{ lease: expect.objectContaining({ id: 'lease-1' }), signal: 'neutral', error: null }]);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(1);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/^cannot sign the callback: /);
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
