import type { RetryPolicy } from '../destinations/destination-settings.cache';
import type { PendingDelivery } from '../loading/delivery-loader';
import { pendingDelivery } from '../loading/pending-delivery.fakes';
import { planAfterCall, stepOf, withoutCall } from './delivery-step';
import { judgeAttempt, RETRY_JITTER, type Verdict } from './retry-policy';

const NOW = new Date('2025-01-01T12:00:00Z');
const EXPIRES_AT = new Date('2025-01-02T12:00:00Z');
const SCHEDULE = [10_000, 60_000];

const delivery = (overrides: Partial<PendingDelivery> = {}): PendingDelivery => pendingDelivery({ expiresAt: EXPIRES_AT, ...overrides });

function policy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return { scheduleMs: SCHEDULE, stopOn: new Set([400, 422]), disableOn: new Set([410]), ...overrides };
}

function answered(status: number, headers: Record<string, string> = {}): Verdict {
  return judgeAttempt({ kind: 'response', status, headers }, NOW.getTime());
}

/** The step fields every outcome of this delivery carries; createdAt is the stored acceptance text, not the Date. */
const STEP = { seq: '1042', destinationId: 'primary', accountId: 7, series: 1, seriesAttempts: 0, createdAt: '2025-01-01 11:59:59.123456+00' };

describe('planAfterCall', () => {
  it('ends a delivery whose call succeeded as delivered at `now`, closing its open row', () => {
    expect(planAfterCall(delivery(), answered(200), 200, policy(), NOW)).toEqual({
      outcome: { ...STEP, status: 'delivered', nextAttemptAt: null, deliveredAt: NOW, lastError: null, open: { kind: 'close' } },
      retryInMs: null,
      disable: null,
    });
    // Without an open row there is nothing to close.
    expect(planAfterCall(delivery({ open: false }), answered(204), 204, policy(), NOW).outcome.open).toEqual({ kind: 'unchanged' });
  });

  it('fails a stop_on answer at once, with schedule left, and disables nothing', () => {
    expect(planAfterCall(delivery(), answered(422), 422, policy(), NOW)).toEqual({
      outcome: { ...STEP, status: 'failed', nextAttemptAt: null, deliveredAt: null, lastError: 'HTTP 422: not retried', open: { kind: 'close' } },
      retryInMs: null,
      disable: null,
    });
  });

  it('fails a disable_on answer at once and asks for the destination to be disabled', () => {
    const planned = planAfterCall(delivery(), answered(410), 410, policy(), NOW);
    expect(planned.outcome).toMatchObject({ status: 'failed', nextAttemptAt: null, lastError: 'HTTP 410: not retried', open: { kind: 'close' } });
    expect(planned.retryInMs).toBeNull();
    expect(planned.disable).toBe("HTTP 410 is in its retry policy's disable_on");
  });

  it('disables when a status is in both stop_on and disable_on', () => {
    const planned = planAfterCall(delivery(), answered(410), 410, policy({ stopOn: new Set([410]) }), NOW);
    expect(planned.outcome.status).toBe('failed');
    expect(planned.disable).toBe("HTTP 410 is in its retry policy's disable_on");
  });

  it('retries a retryable failure after its schedule entry: nextAttemptAt is now + retryInMs and the open row waits for it', () => {
    const planned = planAfterCall(delivery(), answered(500), 500, policy(), NOW);
    const retryInMs = planned.retryInMs ?? -1;
    // Jitter only lengthens the schedule's wait.
    expect(retryInMs).toBeGreaterThanOrEqual(SCHEDULE[0]);
    expect(retryInMs).toBeLessThanOrEqual(Math.round(SCHEDULE[0] * (1 + RETRY_JITTER)));
    const nextAttemptAt = new Date(NOW.getTime() + retryInMs);
    expect(planned).toEqual({
      outcome: {
        ...STEP,
        status: 'retrying',
        nextAttemptAt,
        deliveredAt: null,
        lastError: `HTTP 500: server error (retryable); next attempt in ${retryInMs} ms`,
        open: { kind: 'keep', dueAt: nextAttemptAt, held: null, subject: 'order-9', expiresAt: EXPIRES_AT },
      },
      retryInMs,
      disable: null,
    });
  });

  it("takes the wait of the series' attempt that just failed", () => {
    const planned = planAfterCall(delivery({ status: 'retrying', attempts: 1, seriesAttempts: 1 }), answered(503), 503, policy(), NOW);
    expect(planned.outcome.status).toBe('retrying');
    expect(planned.retryInMs).toBeGreaterThanOrEqual(SCHEDULE[1]);
    expect(planned.retryInMs).toBeLessThanOrEqual(Math.round(SCHEDULE[1] * (1 + RETRY_JITTER)));
    expect(planned.outcome.seriesAttempts).toBe(1);
  });

  it('retries answers outside stop_on and disable_on, permanent ones and failures without an answer included', () => {
    expect(planAfterCall(delivery(), answered(404), 404, policy(), NOW).outcome).toMatchObject({ status: 'retrying', lastError: expect.stringContaining('(permanent)') });
    const timeout = judgeAttempt({ kind: 'error', failure: 'timeout', message: 'no answer within 10000 ms' }, NOW.getTime());
    expect(planAfterCall(delivery(), timeout, null, policy(), NOW).outcome).toMatchObject({
      status: 'retrying',
      lastError: expect.stringMatching(/^time-out: no answer within 10000 ms \(retryable\); next attempt in \d+ ms$/),
    });
  });

  it('fails once the schedule is used up, saying how many attempts the series made', () => {
    expect(planAfterCall(delivery({ status: 'retrying', attempts: 2, seriesAttempts: 2 }), answered(500), 500, policy(), NOW)).toEqual({
      outcome: {
        ...STEP,
        seriesAttempts: 2,
        status: 'failed',
        nextAttemptAt: null,
        deliveredAt: null,
        lastError: 'HTTP 500: server error (retryable); retries exhausted after 3 attempts',
        open: { kind: 'close' },
      },
      retryInMs: null,
      disable: null,
    });
    expect(planAfterCall(delivery(), answered(500), 500, policy({ scheduleMs: [] }), NOW).outcome.lastError).toBe(
      'HTTP 500: server error (retryable); retries exhausted after 1 attempt',
    );
  });

  it("counts the current series' attempts only: a redelivery starts the schedule again", () => {
    const planned = planAfterCall(delivery({ status: 'retrying', attempts: 5, series: 2, seriesAttempts: 0 }), answered(500), 500, policy(), NOW);
    expect(planned.outcome).toMatchObject({ status: 'retrying', series: 2 });
    expect(planned.retryInMs).toBeLessThanOrEqual(Math.round(SCHEDULE[0] * (1 + RETRY_JITTER)));
  });

  it("waits out a throttled answer's Retry-After when it is longer than the schedule's wait", () => {
    const planned = planAfterCall(delivery(), answered(429, { 'retry-after': '120' }), 429, policy(), NOW);
    const nextAttemptAt = new Date(NOW.getTime() + 120_000);
    expect(planned.retryInMs).toBe(120_000);
    expect(planned.outcome).toMatchObject({
      status: 'retrying',
      nextAttemptAt,
      lastError: 'HTTP 429: too many requests (throttled, Retry-After 120 s); next attempt in 120000 ms',
      open: { kind: 'keep', dueAt: nextAttemptAt },
    });
  });

  it('keeps to the schedule when the Retry-After is shorter, and gives up when it is used up whatever the Retry-After', () => {
    const shorter = planAfterCall(delivery(), answered(429, { 'retry-after': '2' }), 429, policy(), NOW);
    expect(shorter.retryInMs).toBeGreaterThanOrEqual(SCHEDULE[0]);
    expect(shorter.retryInMs).toBeLessThanOrEqual(Math.round(SCHEDULE[0] * (1 + RETRY_JITTER)));
    const exhausted = planAfterCall(delivery({ seriesAttempts: 2 }), answered(429, { 'retry-after': '120' }), 429, policy(), NOW);
    expect(exhausted).toMatchObject({ retryInMs: null, outcome: { status: 'failed', lastError: expect.stringContaining('retries exhausted after 3 attempts') } });
  });

  it('plans a retry past the delivery\'s deadline all the same: the expiry is the open row\'s to enforce', () => {
    const soon = new Date(NOW.getTime() + 1_000);
    const planned = planAfterCall(delivery({ expiresAt: soon }), answered(500), 500, policy(), NOW);
    expect(planned.outcome.status).toBe('retrying');
    expect(planned.outcome.open).toMatchObject({ kind: 'keep', expiresAt: soon });
  });
});

describe('the steps without a call', () => {
  it('stepOf names the delivery at its step, counted from its stored acceptance time', () => {
    expect(stepOf(delivery({ series: 3, seriesAttempts: 2 }))).toEqual({ ...STEP, series: 3, seriesAttempts: 2 });
  });

  it('an end without a call ends the delivery with its reason and no attempt', () => {
    expect(withoutCall(delivery(), { kind: 'end', status: 'expired', why: 'expired before it could be delivered', reason: 'expired' })).toEqual({
      ...STEP,
      status: 'expired',
      nextAttemptAt: null,
      deliveredAt: null,
      lastError: 'expired before it could be delivered',
      attempt: null,
      open: { kind: 'close' },
    });
    expect(withoutCall(delivery({ open: false }), { kind: 'end', status: 'no_endpoint', why: 'no push_url is set', reason: 'no_endpoint' }).open).toEqual({ kind: 'unchanged' });
  });

  it('a hold keeps the status and parks the open row, not due, with its subject and deadline', () => {
    expect(withoutCall(delivery({ status: 'retrying' }), { kind: 'hold', hold: 'breaker', why: 'circuit open' })).toEqual({
      ...STEP,
      status: null,
      nextAttemptAt: null,
      deliveredAt: null,
      lastError: 'circuit open',
      attempt: null,
      open: { kind: 'keep', dueAt: null, held: 'breaker', subject: 'order-9', expiresAt: EXPIRES_AT },
    });
  });
});
