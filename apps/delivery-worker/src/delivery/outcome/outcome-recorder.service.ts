import { Inject, Injectable } from '@nestjs/common';
import { Batcher, type DeliveryJobData, DeliveryQueues, ENVIRONMENT, type Environment, inSpan, retryStep, traceCarrier, workerStageStamps } from '@app/runtime';
import type { AccountDeliverySettings } from '../account-settings.cache';
import { EndpointDisabling } from '../admission';
import { deliveryAttemptDuration, deliveryAttempts, deliveryEventsSettled, deliveryJobsWithoutCall, deliveryLatency } from '../delivery.metrics';
import type { PendingEvent } from '../loading/event-loader';
import { type AttemptRow, OutcomeStore } from './outcome-store';
import { planNextStep, stepGuard } from './event-step';
import type { Verdict } from './retry-policy';

export type DeliveryResult = 'stale' | 'superseded' | 'filtered' | 'no_endpoint' | 'delivered' | 'retrying' | 'failed' | 'paused';

/** What the open breaker says of its endpoint: open until when, after how many failures, the last one. */
export interface BreakerOpen {
  retryAt: Date;
  consecutiveFailures: number;
  lastError: string | null;
}

/** The error of an attempt skipped because the breaker is open (CONTRACT §5: recorded, no call made). */
export function circuitOpenError(admission: BreakerOpen): string {
  const failures = admission.consecutiveFailures;
  return (
    `circuit open until ${admission.retryAt.toISOString()} after ${failures} consecutive failure${failures === 1 ? '' : 's'}` +
    (admission.lastError ? `: ${admission.lastError}` : '')
  );
}

/** The attempt's row: the event's next attempt number, to the account's push URL. */
export function attemptRowOf(
  event: PendingEvent,
  settings: AccountDeliverySettings,
  call: Omit<AttemptRow, 'eventSeq' | 'series' | 'attempt' | 'url'>,
): AttemptRow {
  return { eventSeq: event.seq, series: event.series, attempt: event.attempts + 1, url: settings.pushUrl ?? '', ...call };
}

/**
 * The record of one delivery step: the attempt (made, or skipped by the open breaker) and the event's
 * new status in one write, then the next step's job, or the event settled without a call. Every write
 * carries the step guard, so a step that lost a race (redelivery, duplicate job) answers `superseded`.
 */
@Injectable()
export class OutcomeRecorder {
  /**
   * The retries an outcome batch plans go to Redis together: one rank counter call per account and one
   * addBulk per shard, instead of both per job. A breaker that is open records every job of its endpoint
   * as a failed attempt and a retry, so its backlog's retries arrive by the batch.
   */
  private readonly retries: Batcher<{ step: DeliveryJobData; delayMs: number }, void>;

  constructor(
    private readonly store: OutcomeStore,
    queues: DeliveryQueues,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly disabling: EndpointDisabling,
  ) {
    this.retries = new Batcher<{ step: DeliveryJobData; delayMs: number }, void>(
      async (items) => {
        await queues.addBulk(
          items.map((item) => item.step),
          items.map((item) => item.delayMs),
        );
        return items.map(() => ({ ok: true, value: undefined }));
      },
      { maxBatch: 200, maxInFlight: 2, lingerMs: 0 },
    );
  }

  /** Ends the event without a call (no endpoint, filtered, disabled, unencodable, unsignable). */
  async settleWithoutCall(event: PendingEvent, status: 'no_endpoint' | 'filtered' | 'failed', why: string, reason: string = status): Promise<DeliveryResult> {
    const applied = await this.store.record({
      attempt: null,
      change: { ...stepGuard(event), status, attempted: 0, nextAttemptAt: null, deliveredAt: null, lastError: why },
    });
    if (!applied) return 'superseded';
    deliveryJobsWithoutCall.inc({ reason });
    deliveryEventsSettled.inc({ status });
    return status;
  }

  /** Paused: the event stays pending with no due time and no job (the reconciler skips it); resume enqueues it again. */
  async park(event: PendingEvent): Promise<DeliveryResult> {
    const applied = await this.store.record({
      attempt: null,
      change: { ...stepGuard(event), status: null, attempted: 0, nextAttemptAt: null, deliveredAt: null, lastError: 'paused' },
    });
    if (!applied) return 'superseded';
    deliveryJobsWithoutCall.inc({ reason: 'paused' });
    return 'paused';
  }

  /**
   * The breaker is open: the attempt falls due now and fails without a call (CONTRACT §5). It is
   * recorded like any failed attempt (no request headers or body, duration 0) and the schedule goes on.
   */
  recordSkipped(event: PendingEvent, settings: AccountDeliverySettings, admission: BreakerOpen): Promise<DeliveryResult> {
    const error = circuitOpenError(admission);
    deliveryJobsWithoutCall.inc({ reason: 'breaker_open' });
    const attempt = attemptRowOf(event, settings, {
      startedAt: new Date(),
      durationMs: 0,
      requestHeaders: {},
      requestBody: '',
      responseStatus: null,
      responseHeaders: null,
      responseBody: null,
      error,
    });
    const verdict: Verdict = { success: false, failureClass: 'retryable', breakerSignal: 'neutral', retryAfterMs: null, error };
    return this.recordAttempt(event, settings, attempt, verdict, { countsForHealth: true });
  }

  /** A call was made: counted by its outcome and duration, then recorded (recordAttempt). */
  recordCall(event: PendingEvent, settings: AccountDeliverySettings, attempt: AttemptRow, verdict: Verdict, health: { countsForHealth: boolean }): Promise<DeliveryResult> {
    const outcome = verdict.success ? 'delivered' : (verdict.failureClass ?? 'failed');
    deliveryAttempts.inc({ outcome });
    deliveryAttemptDuration.observe({ outcome }, attempt.durationMs / 1000);
    return this.recordAttempt(event, settings, attempt, verdict, health);
  }

  /** Records the attempt and the event's next state, then enqueues the next step or settles. */
  async recordAttempt(
    event: PendingEvent,
    settings: AccountDeliverySettings,
    attempt: AttemptRow,
    verdict: Verdict,
    { countsForHealth }: { countsForHealth: boolean },
  ): Promise<DeliveryResult> {
    const { change, retryInMs } = planNextStep(event, verdict, this.environment.delivery.retryScheduleMs);
    // The failure clock moves first (a write only on a transition), so it is never behind the event's status.
    if (countsForHealth) await this.disabling.noteOutcome(settings, verdict.success, attempt.startedAt);
    const applied = await inSpan('delivery.record', () => this.store.record({ attempt, change }));
    if (!applied) return 'superseded';
    workerStageStamps.recorded(event.seq);
    if (change.status === 'delivered') {
      deliveryEventsSettled.inc({ status: 'delivered' });
      deliveryLatency.observe((Date.now() - event.createdAt.getTime()) / 1000);
      return 'delivered';
    }
    if (change.status === 'failed') {
      deliveryEventsSettled.inc({ status: 'failed' });
      return 'failed';
    }
    // The row says `retrying` with next_attempt_at before the job exists: if this add is lost (crash,
    // Redis away), the reconciler finds the overdue row and enqueues the same job id.
    const retry = retryStep({ eventSeq: event.seq, accountId: event.accountId, series: event.series, attempt: event.seriesAttempts });
    await this.retries.submit({ step: { ...retry, ...traceCarrier() }, delayMs: retryInMs ?? 0 });
    return 'retrying';
  }
}
