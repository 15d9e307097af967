import { computeRetryDelay, describeFailure, judgeAttempt, MAX_RETRY_AFTER_MS, parseRetryAfter, RETRY_JITTER, verdictOf } from './retry-policy';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const SCHEDULE = [10_000, 60_000, 300_000];

function response(status: number, headers: Record<string, string> = {}) {
  return judgeAttempt({ kind: 'response', status, headers }, NOW);
}

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('5', NOW)).toBe(5000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 01-Jan-25 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 11:00:00 GMT', NOW)).toBe(0);
  });

  it('rejects anything else', () => {
    for (const value of [undefined, null, '', '  ', '-5', '1.5', '5s', 'soon', 'Thu, 99 Foo 2025 GMT']) {
      expect(parseRetryAfter(value, NOW)).toBeNull();
    }
  });
});

describe('computeRetryDelay', () => {
  const delay = (attemptsMade: number, random: number, extra: Partial<Parameters<typeof computeRetryDelay>[0]> = {}) =>
    computeRetryDelay({ scheduleMs: SCHEDULE, attemptsMade, failureClass: 'retryable', retryAfterMs: null, random: () => random, ...extra });

  it('waits the schedule entry of the attempt that just failed, then gives up', () => {
    expect(delay(1, 0)).toBe(10_000);
    expect(delay(2, 0)).toBe(60_000);
    expect(delay(3, 0)).toBe(300_000);
    expect(delay(4, 0)).toBeNull();
    expect(delay(0, 0)).toBeNull();
  });

  it('jitters upwards only, by at most RETRY_JITTER', () => {
    expect(delay(1, 0)).toBe(10_000);
    expect(delay(1, 0.999999)).toBe(Math.round(10_000 * (1 + RETRY_JITTER)));
    for (let index = 0; index < 1000; index += 1) {
      const value = computeRetryDelay({ scheduleMs: SCHEDULE, attemptsMade: 2, failureClass: 'retryable', retryAfterMs: null }) ?? -1;
      expect(value).toBeGreaterThanOrEqual(60_000);
      expect(value).toBeLessThanOrEqual(60_000 * (1 + RETRY_JITTER));
    }
  });

  it('honours a longer Retry-After on throttled answers, capped at one hour', () => {
    expect(delay(1, 0, { failureClass: 'throttled', retryAfterMs: 120_000 })).toBe(120_000);
    expect(delay(1, 0, { failureClass: 'throttled', retryAfterMs: 2_000 })).toBe(10_000);
    expect(delay(1, 0, { failureClass: 'throttled', retryAfterMs: 5 * MAX_RETRY_AFTER_MS })).toBe(MAX_RETRY_AFTER_MS);
    expect(delay(1, 0, { failureClass: 'throttled', retryAfterMs: null })).toBe(10_000);
  });

  it('ignores Retry-After on other failures and still gives up after the schedule', () => {
    expect(delay(1, 0, { failureClass: 'retryable', retryAfterMs: 120_000 })).toBe(10_000);
    expect(delay(4, 0, { failureClass: 'throttled', retryAfterMs: 120_000 })).toBeNull();
  });

  it('handles a zero delay schedule', () => {
    expect(computeRetryDelay({ scheduleMs: [0], attemptsMade: 1, failureClass: 'retryable', retryAfterMs: null })).toBe(0);
  });
});

describe('judgeAttempt', () => {
  it('counts every 2xx as success', () => {
    for (const status of [200, 201, 202, 204, 299]) {
      expect(response(status)).toEqual({ success: true, failureClass: null, breakerSignal: 'success', retryAfterMs: null, error: null });
    }
  });

  it('classes 5xx and 408 as retryable and counts them against the endpoint', () => {
    for (const status of [500, 502, 503, 504, 408]) {
      expect(response(status)).toMatchObject({
        success: false,
        failureClass: 'retryable',
        breakerSignal: 'failure',
        error: expect.stringContaining(`HTTP ${status}`),
      });
    }
  });

  it('classes 429, and 503 with Retry-After, as throttled with the requested wait', () => {
    expect(response(429)).toMatchObject({ failureClass: 'throttled', retryAfterMs: null, breakerSignal: 'failure' });
    expect(response(429, { 'retry-after': '7' })).toMatchObject({ failureClass: 'throttled', retryAfterMs: 7000 });
    expect(response(503, { 'retry-after': 'Wed, 01 Jan 2025 12:00:10 GMT' })).toMatchObject({ failureClass: 'throttled', retryAfterMs: 10_000 });
    expect(response(500, { 'retry-after': '7' })).toMatchObject({ failureClass: 'retryable', retryAfterMs: null });
  });

  it('classes redirects and other 4xx as permanent, which does not trip the breaker', () => {
    expect(response(302, { location: 'http://elsewhere' })).toMatchObject({
      success: false,
      failureClass: 'permanent',
      breakerSignal: 'success',
      error: 'HTTP 302: redirect not followed',
    });
    for (const status of [301, 307, 400, 401, 403, 404, 410, 422, 100]) {
      expect(response(status)).toMatchObject({ success: false, failureClass: 'permanent' });
    }
  });

  it('classes transport failures', () => {
    const failures = [
      ['timeout', 'no answer within 500 ms', { failureClass: 'retryable', breakerSignal: 'failure', error: 'time-out: no answer within 500 ms' }],
      ['connection', 'ECONNREFUSED: connect', { failureClass: 'retryable', breakerSignal: 'failure', error: 'connection failed: ECONNREFUSED: connect' }],
      ['refused_target', 'refused: 10.0.0.1 is not a public address', { failureClass: 'permanent', breakerSignal: 'neutral', error: 'refused: 10.0.0.1 is not a public address' }],
      ['invalid_url', 'the URL is not valid', { failureClass: 'permanent', breakerSignal: 'neutral' }],
    ] as const;
    for (const [failure, message, judged] of failures) {
      expect(judgeAttempt({ kind: 'error', failure, message }, NOW)).toMatchObject(judged);
    }
  });
});

describe('describeFailure', () => {
  it('names the error, its class and what happens next', () => {
    expect(describeFailure(response(500), { retryInMs: 1234 })).toBe('HTTP 500: server error (retryable); next attempt in 1234 ms');
    expect(describeFailure(response(429, { 'retry-after': '30' }), { retryInMs: 30_000 })).toBe(
      'HTTP 429: too many requests (throttled, Retry-After 30 s); next attempt in 30000 ms',
    );
    expect(describeFailure(response(404), { exhaustedAfter: 3 })).toBe('HTTP 404: rejected (permanent); retries exhausted after 3 attempts');
  });
});

describe('verdictOf', () => {
  it('judges what a transport answered as the retry schedule and the breaker read it', () => {
    expect(verdictOf({ ok: true, durationMs: 3, status: 202 }, NOW)).toMatchObject({ success: true, breakerSignal: 'success' });
    expect(verdictOf({ ok: false, durationMs: 3, status: 500, reason: 'HTTP 500: server error' }, NOW)).toMatchObject({
      failureClass: 'retryable',
      retryAfterMs: null,
      error: 'HTTP 500: server error',
    });
    expect(verdictOf({ ok: false, durationMs: 3, status: 429, reason: 'HTTP 429: too many requests', retryAfterMs: 120_000 }, NOW)).toMatchObject({
      failureClass: 'throttled',
      retryAfterMs: 120_000,
    });
    expect(verdictOf({ ok: false, durationMs: 3, status: 410, reason: 'HTTP 410: rejected' }, NOW)).toMatchObject({ failureClass: 'permanent', retryAfterMs: null });
  });

  it('judges a call without an answer by its kind: the endpoint is to blame for a time-out, not for a refused target', () => {
    expect(verdictOf({ ok: false, durationMs: 300, reason: 'time-out', failure: 'timeout' }, NOW)).toMatchObject({ failureClass: 'retryable', breakerSignal: 'failure' });
    expect(verdictOf({ ok: false, durationMs: 1, reason: 'connection failed', failure: 'connection' }, NOW)).toMatchObject({ failureClass: 'retryable', breakerSignal: 'failure' });
    expect(verdictOf({ ok: false, durationMs: 0, reason: 'invalid target', failure: 'invalid_url' }, NOW)).toMatchObject({ failureClass: 'permanent', breakerSignal: 'neutral' });
    expect(verdictOf({ ok: false, durationMs: 0, reason: 'refused', failure: 'refused_target' }, NOW)).toMatchObject({ failureClass: 'permanent', breakerSignal: 'neutral' });
    expect(verdictOf({ ok: false, durationMs: 5, reason: 'broker refused' }, NOW)).toMatchObject({ failureClass: 'retryable', breakerSignal: 'failure', error: 'broker refused' });
  });
});
