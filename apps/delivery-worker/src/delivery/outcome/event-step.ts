import type { PendingEvent } from '../loading/event-loader';
import type { EventChange } from './outcome-store';
import { computeRetryDelay, describeFailure, type Verdict } from './retry-policy';

/** The step a change is for: it applies only while the row is still there (see OutcomeStore.record). */
export function stepGuard(event: PendingEvent): Pick<EventChange, 'seq' | 'series' | 'seriesAttempts'> {
  return { seq: event.seq, series: event.series, seriesAttempts: event.seriesAttempts };
}

/**
 * The event's next state after one attempt (made, or skipped by the open breaker): delivered, failed
 * once the schedule is used up, else retrying at its scheduled time; `retryInMs` is the next job's delay.
 */
export function planNextStep(
  event: PendingEvent,
  verdict: Verdict,
  scheduleMs: readonly number[],
  now = new Date(),
): { change: EventChange; retryInMs: number | null } {
  const base = { ...stepGuard(event), attempted: 1 as const };
  if (verdict.success) {
    return { change: { ...base, status: 'delivered', nextAttemptAt: null, deliveredAt: now, lastError: null }, retryInMs: null };
  }
  const attemptsMade = event.seriesAttempts + 1;
  const retryInMs = computeRetryDelay({
    scheduleMs,
    attemptsMade,
    failureClass: verdict.failureClass ?? 'retryable',
    retryAfterMs: verdict.retryAfterMs,
  });
  if (retryInMs === null) {
    return {
      change: { ...base, status: 'failed', nextAttemptAt: null, deliveredAt: null, lastError: describeFailure(verdict, { exhaustedAfter: attemptsMade }) },
      retryInMs: null,
    };
  }
  return {
    change: {
      ...base,
      status: 'retrying',
      nextAttemptAt: new Date(now.getTime() + retryInMs),
      deliveredAt: null,
      lastError: describeFailure(verdict, { retryInMs }),
    },
    retryInMs,
  };
}
