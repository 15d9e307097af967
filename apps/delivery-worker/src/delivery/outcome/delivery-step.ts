import type { deliverySteps, EventStatus, HoldReason } from '@app/persistence';
import type { PendingDelivery } from '../loading/delivery-loader';
import type { RetryPolicy } from '../destinations/destination-settings.cache';
import { computeRetryDelay, describeFailure, type Verdict } from './retry-policy';

/** The part of a step's outcome every change of the delivery carries: which delivery, at which step. */
export function stepOf(delivery: PendingDelivery): Pick<deliverySteps.StepOutcome, 'seq' | 'destinationId' | 'accountId' | 'series' | 'seriesAttempts' | 'createdAt'> {
  return {
    seq: delivery.seq,
    destinationId: delivery.destinationId,
    accountId: delivery.accountId,
    series: delivery.series,
    seriesAttempts: delivery.seriesAttempts,
    createdAt: delivery.acceptedAt,
  };
}

/** The open row of a delivery that ends: removed when it has one. */
function closing(delivery: PendingDelivery): deliverySteps.OpenRowChange {
  return delivery.open ? { kind: 'close' } : { kind: 'unchanged' };
}

/** The open row of a delivery that waits: due at `dueAt` (a retry) or held, keeping its subject and deadline. */
function waiting(delivery: PendingDelivery, dueAt: Date | null, held: HoldReason | null): deliverySteps.OpenRowChange {
  return { kind: 'keep', dueAt, held, subject: delivery.subject, expiresAt: delivery.expiresAt };
}

/**
 * A step that makes no call: the delivery ends (deleted, disabled, erased, expired, unencodable…), or it
 * waits without a job, a call or a step of its schedule until its hold ends (CONTRACT §5, §11).
 * `reason` names why for the jobs-without-call metric.
 */
export type WithoutCall =
  | { kind: 'end'; status: Exclude<EventStatus, 'queued' | 'retrying' | 'delivered'>; why: string; reason: string }
  | { kind: 'hold'; hold: HoldReason; why: string };

/** What a step without a call makes of the delivery: ended with its reason, or held (status kept, open row parked). */
export function withoutCall(delivery: PendingDelivery, change: WithoutCall): deliverySteps.StepOutcome {
  const open = change.kind === 'end' ? closing(delivery) : waiting(delivery, null, change.hold);
  return { ...stepOf(delivery), status: change.kind === 'end' ? change.status : null, nextAttemptAt: null, deliveredAt: null, lastError: change.why, attempt: null, open };
}

/** What one call makes of the delivery (its attempt added by the caller), the retry's delay, and a disabling its policy asks for. */
export interface PlannedStep {
  outcome: Omit<deliverySteps.StepOutcome, 'attempt'>;
  retryInMs: number | null;
  /** The destination's `disable_on` named this answer: disable it, for this reason. */
  disable: string | null;
}

/**
 * The delivery's next state after one call, by its destination's retry policy (CONTRACT §13): delivered;
 * failed at once on a `stop_on` or `disable_on` status (the latter disabling the destination); else
 * retrying at its scheduled time, failed once the schedule is used up. A deadline is the expiry's to
 * enforce (the open row carries it), so a retry is planned as if there were none.
 */
export function planAfterCall(delivery: PendingDelivery, verdict: Verdict, responseStatus: number | null, policy: RetryPolicy, now = new Date()): PlannedStep {
  const step = stepOf(delivery);
  if (verdict.success) {
    return { outcome: { ...step, status: 'delivered', nextAttemptAt: null, deliveredAt: now, lastError: null, open: closing(delivery) }, retryInMs: null, disable: null };
  }
  if (responseStatus !== null && (policy.stopOn.has(responseStatus) || policy.disableOn.has(responseStatus))) {
    const why = `HTTP ${responseStatus}: not retried`;
    const disable = policy.disableOn.has(responseStatus) ? `HTTP ${responseStatus} is in its retry policy's disable_on` : null;
    return { outcome: { ...step, status: 'failed', nextAttemptAt: null, deliveredAt: null, lastError: why, open: closing(delivery) }, retryInMs: null, disable };
  }
  const attemptsMade = delivery.seriesAttempts + 1;
  const retryInMs = computeRetryDelay({
    scheduleMs: policy.scheduleMs,
    attemptsMade,
    failureClass: verdict.failureClass ?? 'retryable',
    retryAfterMs: verdict.retryAfterMs,
  });
  if (retryInMs === null) {
    const lastError = describeFailure(verdict, { exhaustedAfter: attemptsMade });
    return { outcome: { ...step, status: 'failed', nextAttemptAt: null, deliveredAt: null, lastError, open: closing(delivery) }, retryInMs: null, disable: null };
  }
  const nextAttemptAt = new Date(now.getTime() + retryInMs);
  return {
    outcome: { ...step, status: 'retrying', nextAttemptAt, deliveredAt: null, lastError: describeFailure(verdict, { retryInMs }), open: waiting(delivery, nextAttemptAt, null) },
    retryInMs,
    disable: null,
  };
}
