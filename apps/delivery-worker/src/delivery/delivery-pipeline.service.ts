import { Inject, Injectable } from '@nestjs/common';
import { DelayedError } from 'bullmq';
import { isAtStep, isFinalStatus } from '@app/persistence';
import { type DeliveryBody, encodeDeliveryBody } from '@app/payloads';
import { deliveryJobId, destinationOfStep, ENVIRONMENT, type Environment, inSpan, isDatabaseUnavailable, loggableErrorText } from '@app/runtime';
import { AdmissionDoor, disabledEndpointError, EndpointDisabling, type Lease } from './admission';
import { type DestinationSettings, DestinationSettingsCache } from './destinations/destination-settings.cache';
import { deliveryDatabaseWaits, deliveryJobsWithoutCall } from './delivery.metrics';
import type { DeliveryJob } from './delivery-job';
import { type Decision, DESTINATION_DELETED, ERASED, standingDecision } from './delivery-decision';
import { ErasedEventError, ErasureCheck } from './erasure-check';
import { OperationalEventsService } from './holding/operational-events.service';
import { DeliveryLoader, type PendingDelivery } from './loading/delivery-loader';
import { type DeliveryResult, OutcomeRecorder } from './outcome/outcome-recorder.service';
import { judgeOutcome } from './outcome/retry-policy';
import { SubjectOrder } from './ordering/subject-order';
import { DeliverySender, UnsignableCallbackError } from './destinations/delivery-sender';
import { capHeaders } from './destinations/transport-outcome';

/** Pause of a job that met a database outage (spread ±50 %). */
const DATABASE_WAIT_MS = 5_000;

/** A manual redelivery (single or bulk) starts a new series; its first attempt always makes its call. */
function isRedeliveryStart(delivery: PendingDelivery): boolean {
  return delivery.series > 0 && delivery.seriesAttempts === 0;
}

/** The breaker's words for a held delivery's last_error: open until when, after how many failures, the last one. */
export function circuitOpenText(open: { retryAt: Date; consecutiveFailures: number; lastError: string | null }): string {
  const failures = open.consecutiveFailures;
  return (
    `circuit open since ${failures} consecutive failure${failures === 1 ? '' : 's'}, held until a probe succeeds (probe after ${open.retryAt.toISOString()})` +
    (open.lastError ? `: ${open.lastError}` : '')
  );
}

/**
 * One delivery step, for every destination alike (the primary is the destination `primary`): load →
 * decide (stale, destination deleted, event erased, deadline passed, destination paused, disabled, an
 * earlier delivery of its subject still open) → admit (AdmissionDoor: call now, wait, or the breaker is
 * open and the delivery is held) → encode and sign → send through the destination type's transport →
 * record (OutcomeRecorder). Knows nothing of BullMQ's worker; the processor hands jobs in.
 */
@Injectable()
export class DeliveryPipeline {
  constructor(
    private readonly loader: DeliveryLoader,
    private readonly destinations: DestinationSettingsCache,
    private readonly admission: AdmissionDoor,
    private readonly recorder: OutcomeRecorder,
    private readonly disabling: EndpointDisabling,
    private readonly order: SubjectOrder,
    private readonly erasure: ErasureCheck,
    private readonly sender: DeliverySender,
    private readonly operational: OperationalEventsService,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** No call starts from now on (shutdown): jobs that reach their call end with WorkerStoppingError. */
  stop(): void {
    this.admission.stopCalls();
  }

  /** Sends still waiting for an answer end now and are recorded as failed attempts (shutdown). */
  abandonInFlight(): number {
    return this.sender.abandon();
  }

  /**
   * Resolves when the step's outcome is durably written; throws when it could not be (the job then
   * fails, and the reconciler re-enqueues the still-pending delivery), or DelayedError after moving the
   * job to a later time without spending an attempt.
   */
  async deliver(job: DeliveryJob, token: string | undefined): Promise<DeliveryResult> {
    try {
      return await this.deliverStep(job, token);
    } catch (error) {
      if (error instanceof DelayedError || !token || !isDatabaseUnavailable(error)) throw error;
      // PostgreSQL is away: keep the job and try again shortly, rather than failing every job of the
      // queue into the reconciler's hands. Nothing was recorded, so a call already made is simply
      // made again (at least once).
      deliveryDatabaseWaits.inc();
      await job.moveToDelayed(Date.now() + Math.round(DATABASE_WAIT_MS * (0.5 + Math.random())), token);
      throw new DelayedError(`PostgreSQL unavailable: ${loggableErrorText(error)}`);
    }
  }

  private async deliverStep(job: DeliveryJob, token: string | undefined): Promise<DeliveryResult> {
    const step = job.data;
    const destinationId = destinationOfStep(step);
    const waitMs = this.admission.waitBeforeLoad(deliveryJobId(step));
    if (waitMs !== null) return this.postpone(job, token, waitMs, 'busy', null);
    const destination = await this.destinations.get(step.accountId, destinationId);
    // Said before the load: a later delivery of the subject whose load comes back first waits for this one's end.
    const over = destination?.ordering === 'subject' ? this.order.startWorking({ seq: step.eventSeq, destinationId, series: step.series }) : null;
    // Before the load is asked for: an erasure committed earlier is in what it reads (ErasureCheck).
    const loadStartedAt = performance.now();
    try {
      const delivery = await this.loader.load(step.eventSeq, destinationId);
      if (!delivery || !isAtStep(delivery, step)) {
        deliveryJobsWithoutCall.inc({ reason: 'stale' });
        return 'stale';
      }
      const decision = await this.decide(step, delivery, destination);
      const result = await this.carryOut(job, token, delivery, decision, loadStartedAt);
      // The delivery ended (not merely retrying or held), so the next one of its subject goes now.
      if (destination?.ordering === 'subject' && isFinalStatus(result)) await this.order.release(delivery);
      return result;
    } finally {
      over?.();
    }
  }

  /**
   * What this step does with the delivery, in the order the checks are owed: decided first, carried out
   * in one place (carryOut), so every way a step can go is read in one function.
   */
  private async decide(step: DeliveryJob['data'], delivery: PendingDelivery, destination: DestinationSettings | null): Promise<Decision> {
    if (!destination) return DESTINATION_DELETED;
    const standing = standingDecision(delivery, destination, Date.now());
    if (standing) return standing;
    // A disabled destination is never called, a manual redelivery included: the operator enables it first.
    const disabled = await this.disabling.disabled(destination);
    if (disabled) return { kind: 'end', status: 'failed', why: disabledEndpointError(disabled), reason: 'endpoint_disabled' };
    const redelivery = isRedeliveryStart(delivery);
    // Ordering "subject": an earlier delivery of the subject still open holds this one (no attempt spent); a manual redelivery goes at once.
    if (destination.ordering === 'subject' && !redelivery) {
      const holdMs = await this.order.holdMs(delivery);
      if (holdMs !== null) return { kind: 'postpone', ms: holdMs, reason: 'held_by_subject' };
    }
    let body: DeliveryBody;
    try {
      body = encodeDeliveryBody(destination.encoding, { ...delivery, acceptedAt: delivery.createdAt, source: this.environment.publicUrl });
    } catch (error) {
      // No attempt could ever encode it: the delivery ends failed and says why, instead of failing its job for ever (CONTRACT §5).
      return { kind: 'end', status: 'failed', why: `cannot encode the ${destination.encoding} body: ${loggableErrorText(error)}`, reason: 'unencodable' };
    }
    const entry = await this.admission.admit({
      job: deliveryJobId(step),
      endpointKey: destination.endpointKey,
      force: redelivery,
      probe: step.probe === true,
      maxPerSecond: destination.maxPerSecond,
    });
    if (entry.kind === 'wait') return { kind: 'postpone', ms: entry.ms, reason: entry.reason };
    // The breaker holds it (CONTRACT §5): no call, no attempt, no step of its schedule; a probe or the breaker's close sends it again.
    if (entry.kind === 'open') return { kind: 'hold', hold: 'breaker', why: circuitOpenText(entry) };
    return { kind: 'call', destination, body, lease: entry.lease };
  }

  private carryOut(job: DeliveryJob, token: string | undefined, delivery: PendingDelivery, decision: Decision, loadStartedAt: number): Promise<DeliveryResult> {
    switch (decision.kind) {
      case 'postpone':
        return this.postpone(job, token, decision.ms, decision.reason, delivery);
      case 'call':
        return this.attempt(delivery, decision.destination, decision.body, decision.lease, loadStartedAt);
      default:
        return this.recorder.withoutCall(delivery, decision);
    }
  }

  /**
   * Moves the job to later and throws DelayedError, which BullMQ does not count as an attempt. A
   * delivery with a deadline wakes no later than it (and then ends `expired`).
   */
  private async postpone(job: DeliveryJob, token: string | undefined, delayMs: number, reason: string, delivery: PendingDelivery | null): Promise<never> {
    if (!token) throw new Error('cannot delay a job without its lock token');
    deliveryJobsWithoutCall.inc({ reason });
    const deadlineIn = delivery?.expiresAt ? Math.max(0, delivery.expiresAt.getTime() - Date.now()) : Number.POSITIVE_INFINITY;
    const ms = Math.min(delayMs, deadlineIn);
    await job.moveToDelayed(Date.now() + ms, token);
    if (reason === 'held_by_subject' && delivery) await this.order.afterHold(delivery.accountId, deliveryJobId(job.data), ms);
    throw new DelayedError(`delivery postponed by ${ms} ms`);
  }

  private async attempt(delivery: PendingDelivery, destination: DestinationSettings, body: DeliveryBody, lease: Lease, loadStartedAt: number): Promise<DeliveryResult> {
    let exchange: Awaited<ReturnType<DeliverySender['send']>>;
    try {
      await this.erasure.beforeCall(delivery, loadStartedAt);
      exchange = await inSpan('delivery.call', () => this.sender.send(delivery, destination, body));
    } catch (error) {
      // The send itself never throws (failures are outcomes); a bug before it must not strand the lease.
      await this.admission.release(lease, { signal: 'neutral', error: null, durationMs: null, slowDown: null });
      if (error instanceof ErasedEventError) return this.recorder.withoutCall(delivery, ERASED);
      if (error instanceof UnsignableCallbackError) return this.recorder.withoutCall(delivery, { kind: 'end', status: 'failed', why: error.message, reason: 'unsignable' });
      throw error;
    }
    const { startedAt, storedHeaders, outcome, abandoned } = exchange;
    const { verdict, slowDown } = judgeOutcome(outcome, abandoned, Date.now());
    const attempt = {
      attempt: delivery.attempts + 1,
      startedAt,
      durationMs: Math.round(outcome.durationMs),
      url: destination.shownTarget,
      requestHeaders: storedHeaders,
      encoding: destination.encoding,
      responseStatus: outcome.status ?? null,
      responseHeaders: outcome.responseHeaders ? capHeaders(outcome.responseHeaders) : null,
      responseBody: outcome.responseBody ?? null,
      error: verdict.error,
    };
    // The record does not wait for the endpoint to learn the outcome: every moment between the answer
    // and its row's commit is one in which a crash makes the delivery a duplicate. release never throws,
    // so the record's own failure is the only one Promise.all can report. An abandoned send says nothing
    // about the destination: its failure clock does not learn from it either.
    const [recorded, breaker] = await Promise.all([
      this.recorder.recordCall(delivery, destination, attempt, verdict, { countsForHealth: !abandoned }),
      this.admission.release(lease, { signal: verdict.breakerSignal, error: verdict.error, durationMs: outcome.durationMs, slowDown }),
    ]);
    // The account hears of its destination's breaker opening or closing (CONTRACT §14).
    if (breaker?.change === 'opened') {
      await this.operational.emit(destination, 'Destination_failing', `its circuit breaker opened after ${breaker.consecutiveFailures} consecutive failed calls: ${verdict.error ?? 'failed'}`);
    } else if (breaker?.change === 'closed') {
      await this.operational.emit(destination, 'Destination_recovered', 'its circuit breaker closed: a call succeeded');
    }
    return recorded;
  }
}
