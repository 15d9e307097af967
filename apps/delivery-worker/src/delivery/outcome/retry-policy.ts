import type { OutboundFailureKind } from '@app/runtime';
import type { BreakerSignal } from '../admission';
import type { TransportOutcome } from '../destinations/destination-transport';
import { httpFailureText, parseRetryAfter } from '../destinations/transport-outcome';

export { parseRetryAfter } from '../destinations/transport-outcome';

/**
 * retryable: the endpoint is down, slow or overloaded (network, time-out, 5xx, 408);
 * throttled: it asked us to slow down (429, or 503 with Retry-After);
 * permanent: it answered but refused this delivery (3xx, other 4xx) or can never be called (refused
 * target, invalid URL). CONTRACT §5 retries every failure per schedule, permanent ones included: the
 * class is recorded so operators can tell a broken receiver from a temporarily unavailable one.
 */
export type FailureClass = 'retryable' | 'throttled' | 'permanent';

export type AttemptResult =
  | { kind: 'response'; status: number; headers: Record<string, string> }
  | { kind: 'error'; failure: OutboundFailureKind; message: string };

export interface Verdict {
  success: boolean;
  failureClass: FailureClass | null;
  /** How the outcome feeds the endpoint's circuit breaker. */
  breakerSignal: BreakerSignal;
  /** Milliseconds the receiver asked us to wait (Retry-After), when it did. */
  retryAfterMs: number | null;
  /** Short description for the attempt row and the event's last_error; null on success. */
  error: string | null;
}

/** Upper bound on a receiver's Retry-After: a bogus header must not park an event for days. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
/**
 * Retry delays are stretched by up to this share so endpoints that failed together do not retry in
 * lockstep. Only upwards: a schedule is the least a receiver waits between calls (CONTRACT §13).
 */
export const RETRY_JITTER = 0.15;

/** Judges one attempt: success is any 2xx; everything else is a classified failure. */
export function judgeAttempt(result: AttemptResult, nowMs: number): Verdict {
  if (result.kind === 'error') {
    switch (result.failure) {
      case 'timeout':
        return { success: false, failureClass: 'retryable', breakerSignal: 'failure', retryAfterMs: null, error: `time-out: ${result.message}` };
      case 'connection':
        return { success: false, failureClass: 'retryable', breakerSignal: 'failure', retryAfterMs: null, error: `connection failed: ${result.message}` };
      case 'refused_target':
        // Nothing was dialled, so this says nothing about the endpoint's health.
        return { success: false, failureClass: 'permanent', breakerSignal: 'neutral', retryAfterMs: null, error: result.message };
      case 'invalid_url':
        return { success: false, failureClass: 'permanent', breakerSignal: 'neutral', retryAfterMs: null, error: `invalid push_url: ${result.message}` };
    }
  }
  const { status } = result;
  if (status >= 200 && status < 300) {
    return { success: true, failureClass: null, breakerSignal: 'success', retryAfterMs: null, error: null };
  }
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(result.headers['retry-after'], nowMs) : null;
  let failureClass: FailureClass;
  if (status === 429 || (status === 503 && retryAfterMs !== null)) failureClass = 'throttled';
  else if (status === 408 || status >= 500) failureClass = 'retryable';
  else failureClass = 'permanent';
  // A permanent answer came back promptly from a live endpoint: it does not count towards opening the
  // breaker (a receiver rejecting one odd event must not hold back its other events).
  const breakerSignal: BreakerSignal = failureClass === 'permanent' ? 'success' : 'failure';
  return { success: false, failureClass, breakerSignal, retryAfterMs, error: httpFailureText(status) };
}

/**
 * Delay before the next attempt of a series, or null when the schedule is exhausted.
 * `attemptsMade` counts the attempts of this series including the one that just failed: the first
 * attempt is immediate, attempt n+1 waits `scheduleMs[n-1]`. Jitter lengthens the delay by up to RETRY_JITTER;
 * a throttled answer's Retry-After (capped at MAX_RETRY_AFTER_MS) is honoured when longer.
 */
export function computeRetryDelay(options: {
  scheduleMs: readonly number[];
  attemptsMade: number;
  failureClass: FailureClass;
  retryAfterMs: number | null;
  random?: () => number;
}): number | null {
  const base = options.scheduleMs[options.attemptsMade - 1];
  if (base === undefined || options.attemptsMade < 1) return null;
  const random = options.random ?? Math.random;
  const jittered = Math.max(0, Math.round(base * (1 + random() * RETRY_JITTER)));
  if (options.failureClass === 'throttled' && options.retryAfterMs !== null) {
    return Math.max(jittered, Math.min(options.retryAfterMs, MAX_RETRY_AFTER_MS));
  }
  return jittered;
}

/** The event's last_error: what went wrong, its class, and what happens next. */
export function describeFailure(verdict: Verdict, next: { retryInMs: number } | { exhaustedAfter: number }): string {
  const retryAfter = verdict.retryAfterMs !== null ? `, Retry-After ${Math.round(verdict.retryAfterMs / 1000)} s` : '';
  const head = `${verdict.error ?? 'failed'} (${verdict.failureClass ?? 'failed'}${retryAfter})`;
  if ('retryInMs' in next) return `${head}; next attempt in ${Math.round(next.retryInMs)} ms`;
  return `${head}; retries exhausted after ${next.exhaustedAfter} attempt${next.exhaustedAfter === 1 ? '' : 's'}`;
}

/**
 * What a transport's outcome tells the retry schedule and the breaker, whatever the destination's type:
 * an HTTP answer is judged as any answer is (judgeAttempt), a failure without one by its kind (a refused
 * target or an invalid URL says nothing of the endpoint's health), a broker's refusal as retryable. The
 * error text is the transport's (it knows the target's words and masks its credentials).
 */
export function verdictOf(outcome: TransportOutcome, nowMs: number): Verdict {
  if (outcome.ok) return { success: true, failureClass: null, breakerSignal: 'success', retryAfterMs: null, error: null };
  if (outcome.status !== undefined) {
    const judged = judgeAttempt({ kind: 'response', status: outcome.status, headers: outcome.responseHeaders ?? {} }, nowMs);
    return { ...judged, retryAfterMs: outcome.retryAfterMs ?? judged.retryAfterMs, error: outcome.reason };
  }
  if (outcome.failure) return { ...judgeAttempt({ kind: 'error', failure: outcome.failure, message: '' }, nowMs), error: outcome.reason };
  return { success: false, failureClass: 'retryable', breakerSignal: 'failure', retryAfterMs: outcome.retryAfterMs ?? null, error: outcome.reason };
}

/**
 * Judges a send as its endpoint should learn it: the verdict, neutral for the breaker when the worker
 * abandoned the send (it says nothing about the endpoint), and the slow-down a 429 or 503 asks for
 * (honouring Retry-After; the attempt still counts as failed, CONTRACT §9).
 */
export function judgeOutcome(outcome: TransportOutcome, abandoned: boolean, nowMs: number): { verdict: Verdict; slowDown: { retryAfterMs: number | null } | null } {
  const judged = verdictOf(outcome, nowMs);
  if (abandoned) return { verdict: { ...judged, breakerSignal: 'neutral' }, slowDown: null };
  const slowDown = outcome.status === 429 || outcome.status === 503 ? { retryAfterMs: judged.retryAfterMs } : null;
  return { verdict: judged, slowDown };
}
