import { Injectable } from '@nestjs/common';
import { deliverySteps, type EventStatus, PRIMARY_DESTINATION_ID } from '@app/persistence';
import { Batcher, type DeliveryJobData, DeliveryQueues, deliveryStepData, inSpan, retryStep, traceCarrier, workerStageStamps } from '@app/runtime';
import { EndpointDisabling } from '../admission';
import type { DestinationSettings } from '../destinations/destination-settings.cache';
import { deliveryAttemptDuration, deliveryAttempts, deliveryEventsSettled, deliveryJobsWithoutCall, deliveryLatency } from '../delivery.metrics';
import type { PendingDelivery } from '../loading/delivery-loader';
import { planAfterCall, withoutCall, type WithoutCall } from './delivery-step';
import { OutcomeStore } from './outcome-store';
import type { Verdict } from './retry-policy';

/**
 * The delivery's new status, or why the job changed none: `stale` (it moved on before the call),
 * `superseded` (it moved on before the write: a redelivery, or a duplicate job that recorded first),
 * `held` (it waits without a job for its destination's pause, breaker or the re-queuing bound).
 */
export type DeliveryResult = Exclude<EventStatus, 'queued'> | 'stale' | 'superseded' | 'held';

/**
 * The record of one delivery step, for every destination alike: a call's attempt and the delivery's
 * next state by its destination's retry policy in one write, then the retry's job; or the delivery
 * ended or held without a call. Every write carries the step guard, so a step that lost a race
 * (redelivery, duplicate job) answers `superseded`.
 */
@Injectable()
export class OutcomeRecorder {
  /** The retries an outcome batch plans go to Redis together: one rank counter call per account and one addBulk per shard. */
  private readonly retries: Batcher<{ step: DeliveryJobData; delayMs: number }, void>;

  constructor(
    private readonly store: OutcomeStore,
    queues: DeliveryQueues,
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

  /** A step without a call: the delivery ends, or waits without a job; its open row says why, and what ends a hold sends it again. */
  async withoutCall(delivery: PendingDelivery, change: WithoutCall): Promise<DeliveryResult> {
    if (!(await this.store.record(withoutCall(delivery, change)))) return 'superseded';
    if (change.kind === 'hold') {
      deliveryJobsWithoutCall.inc({ reason: change.hold === 'breaker' ? 'breaker_open' : change.hold });
      return 'held';
    }
    deliveryJobsWithoutCall.inc({ reason: change.reason });
    deliveryEventsSettled.inc({ status: change.status });
    return change.status;
  }

  /**
   * A call was made: counted, its outcome fed to the destination's failure clock (unless it says nothing
   * of the destination's health), recorded with the delivery's next state, then its retry enqueued.
   */
  async recordCall(
    delivery: PendingDelivery,
    destination: DestinationSettings,
    attempt: deliverySteps.AttemptToRecord,
    verdict: Verdict,
    { countsForHealth }: { countsForHealth: boolean },
  ): Promise<DeliveryResult> {
    const outcomeLabel = verdict.success ? 'delivered' : (verdict.failureClass ?? 'failed');
    deliveryAttempts.inc({ outcome: outcomeLabel });
    deliveryAttemptDuration.observe({ outcome: outcomeLabel }, attempt.durationMs / 1000);
    const planned = planAfterCall(delivery, verdict, attempt.responseStatus, destination.retry);
    // The failure clock moves beside the record, not before it: on a transition it is a statement and a
    // notice to the other workers, and every moment the record waits behind them is one in which a crash
    // makes the call a duplicate (with a flaky receiver, transitions are frequent). A crash between the
    // two leaves the clock one outcome off, which the next outcome corrects and a disabling threshold of
    // days does not notice. noteOutcome never throws.
    const noted = countsForHealth ? this.disabling.noteOutcome(destination, verdict.success, attempt.startedAt) : undefined;
    if (planned.disable) await this.disabling.disableNow(destination, planned.disable);
    const [applied] = await Promise.all([inSpan('delivery.record', () => this.store.record({ ...planned.outcome, attempt })), noted]);
    if (!applied) return 'superseded';
    const status = planned.outcome.status;
    if (delivery.destinationId === PRIMARY_DESTINATION_ID) workerStageStamps.recorded(delivery.seq);
    if (status === 'delivered' || status === 'failed') {
      deliveryEventsSettled.inc({ status });
      if (status === 'delivered') deliveryLatency.observe((Date.now() - delivery.createdAt.getTime()) / 1000);
      return status;
    }
    // The delivery says `retrying` with its open row due before the job exists: if this add is lost
    // (crash, Redis away), the reconciler finds the overdue row and enqueues the same job id.
    const retry = retryStep(deliveryStepData(delivery));
    await this.retries.submit({ step: { ...retry, ...traceCarrier() }, delayMs: planned.retryInMs ?? 0 });
    return 'retrying';
  }
}
