import { Inject, Injectable } from '@nestjs/common';
import { DelayedError } from 'bullmq';
import { isAtStep, isFinalStatus } from '@app/persistence';
import { isEventAction, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { deliveryJobId, ENVIRONMENT, type Environment, inSpan, isDatabaseUnavailable, loggableErrorText, type OutboundHttpClient } from '@app/runtime';
import { type AccountDeliverySettings, AccountSettingsCache } from './account-settings.cache';
import { CallbackSender, capHeaders, DELIVERY_HTTP_CLIENT, UnsignableCallbackError } from './request/callback-exchange';
import { type CallbackBody, encodeCallbackBody } from './request/callback-request';
import { deliveryDatabaseWaits, deliveryJobsWithoutCall } from './delivery.metrics';
import { EventLoader, type OrderedLoad, type PendingEvent } from './loading/event-loader';
import { AdmissionDoor, disabledEndpointError, EndpointDisabling, type Lease } from './admission';
import { attemptRowOf, type DeliveryResult, OutcomeRecorder } from './outcome/outcome-recorder.service';
import { judgeCall } from './outcome/retry-policy';
import { SubjectOrder } from './ordering/subject-order';
import { ErasedEventError, ErasureCheck } from './erasure-check';
import { DestinationDeliveryService } from './destination-delivery/destination-delivery.service';
import type { DeliveryJob } from './delivery-job';

export type { DeliveryJob } from './delivery-job';
export { capHeaders, DELIVERY_HTTP_CLIENT, MAX_STORED_RESPONSE_BYTES } from './request/callback-exchange';

/** Pause of a job that met a database outage (spread ±50 %). */
const DATABASE_WAIT_MS = 5_000;


/** A manual redelivery (single or bulk) starts a new series; its first attempt always makes its call. */
function isRedeliveryStart(event: PendingEvent): boolean {
  return event.series > 0 && event.seriesAttempts === 0;
}

/**
 * One delivery step of one event: load → decide (stale, no endpoint, filtered, endpoint disabled, held
 * by its subject's order) → admit (AdmissionDoor: call now, wait, or the breaker is open) → encode, sign
 * and POST → record (OutcomeRecorder: the attempt, the event's new status, the next step's job). Knows
 * nothing of BullMQ's worker; the processor hands jobs in.
 */
@Injectable()
export class DeliveryService {
  private readonly sender: CallbackSender;

  constructor(
    private readonly loader: EventLoader,
    private readonly settings: AccountSettingsCache,
    private readonly admission: AdmissionDoor,
    @Inject(DELIVERY_HTTP_CLIENT) http: Pick<OutboundHttpClient, 'post'>,
    private readonly recorder: OutcomeRecorder,
    @Inject(ENVIRONMENT) environment: Environment,
    private readonly disabling: EndpointDisabling,
    private readonly order: SubjectOrder,
    private readonly erasure: ErasureCheck,
    private readonly destinations: DestinationDeliveryService,
  ) {
    this.sender = new CallbackSender(http, environment.delivery.timeoutMs);
  }

  /** No call starts from now on (shutdown): jobs that reach their call end with WorkerStoppingError. */
  stop(): void {
    this.admission.stopCalls();
  }

  /** Calls still waiting for an answer end now and are recorded as failed attempts (shutdown). */
  abandonInFlight(): number {
    const count = this.sender.inFlight;
    this.sender.abandon();
    return count + this.destinations.abandonInFlight();
  }

  /**
   * Resolves when the step's outcome is durably written; throws when it could not be (the job then
   * fails, and the reconciler re-enqueues the still-pending event), or DelayedError after moving the
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
    // A delivery to an extra destination (CONTRACT §11): the same steps against its own rows.
    if (step.destinationId !== undefined) return this.destinations.deliver(job, token, step.destinationId);
    const waitMs = this.admission.waitBeforeLoad(deliveryJobId(step));
    if (waitMs !== null) return this.postpone(job, token, waitMs, 'busy');

    // An ordered endpoint's job loads its event with the first ordering question answered (one statement).
    const stepSettings = await this.settings.get(step.accountId);
    const ordered = stepSettings?.ordering === 'subject';
    // Said before the load: a later job of the subject whose load comes back first waits here for this
    // one's end (SubjectOrder.holdMs) instead of going through the delayed set.
    let over = ordered ? this.order.startWorking({ seq: step.eventSeq, series: step.series }) : null;
    // Before the load is asked for: an erasure committed earlier is in what it reads (ErasureCheck).
    const loadStartedAt = performance.now();
    try {
      const orderedLoad = ordered ? ((await this.loader.loadOrderedEvent(step.eventSeq)) ?? undefined) : undefined;
      const event = ordered ? orderedLoad?.event : await this.loader.loadEvent(step.eventSeq);
      if (!event || !isAtStep(event, step)) {
        deliveryJobsWithoutCall.inc({ reason: 'stale' });
        return 'stale';
      }

      const settings = event.accountId === step.accountId ? stepSettings : await this.settings.get(event.accountId);
      if (settings?.ordering !== 'subject') return await this.deliverEvent(job, token, { event, loadStartedAt }, settings);
      over ??= this.order.startWorking(event);
      const result = await this.deliverEvent(job, token, { event, loadStartedAt }, settings, orderedLoad);
      // The event ended (not merely retrying), so the next event of its subject goes now.
      if (isFinalStatus(result)) await this.order.release(event);
      return result;
    } finally {
      over?.();
    }
  }

  /**
   * `loaded.loadStartedAt`: performance.now() before the event's load was asked for; `orderedLoad`: an
   * ordered endpoint's load, whose answer to the first ordering question SubjectOrder.holdMs takes.
   */
  private async deliverEvent(
    job: DeliveryJob,
    token: string | undefined,
    loaded: { event: PendingEvent; loadStartedAt: number },
    settings: AccountDeliverySettings | null,
    orderedLoad?: OrderedLoad,
  ): Promise<DeliveryResult> {
    const { event } = loaded;
    // Paused (CONTRACT §11): no attempt and no next job; resume enqueues the account's pending events again.
    if (settings?.paused) return this.recorder.park(event);
    if (!settings?.pushUrl) {
      return this.recorder.settleWithoutCall(event, 'no_endpoint', settings ? 'no push_url is set' : `account ${event.accountId} does not exist`);
    }
    const permissionKey = isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null;
    if (!permissionKey) return this.recorder.settleWithoutCall(event, 'filtered', `unknown action ${event.action}`);
    if (!event.test && settings.permissions[permissionKey] !== true) return this.recorder.settleWithoutCall(event, 'filtered', `permission ${permissionKey} is off`);
    // A disabled endpoint is never called, a manual redelivery included: the operator enables it first.
    const disabled = await this.disabling.disabled(settings);
    if (disabled) return this.recorder.settleWithoutCall(event, 'failed', disabledEndpointError(disabled), 'endpoint_disabled');
    // Ordering "subject": an earlier event of the subject still pending holds this one (no attempt spent); a manual redelivery goes at once.
    if (settings.ordering === 'subject' && !isRedeliveryStart(event)) {
      const holdMs = await this.order.holdMs(event, orderedLoad);
      if (holdMs !== null) {
        // Once in the delayed set, the job takes a release the event ahead left meanwhile (SubjectOrder).
        return this.postpone(job, token, holdMs, 'held_by_subject', () => this.order.afterHold(event.accountId, deliveryJobId(job.data), holdMs));
      }
    }

    let callback: CallbackBody;
    try {
      callback = encodeCallbackBody(settings.encoding, event.action, event.messageText);
    } catch (error) {
      // No attempt could ever encode it: the event ends failed and says why, instead of failing its job for ever (CONTRACT §5).
      return this.recorder.settleWithoutCall(event, 'failed', `cannot encode the callback body (${settings.encoding}): ${loggableErrorText(error)}`, 'unencodable');
    }
    const entry = await this.admission.admit({
      job: deliveryJobId(job.data),
      accountId: event.accountId,
      pushUrl: settings.pushUrl,
      force: isRedeliveryStart(event),
      maxPerSecond: settings.maxPerSecond,
    });
    if (entry.kind === 'wait') return this.postpone(job, token, entry.ms, entry.reason);
    if (entry.kind === 'open') return this.recorder.recordSkipped(event, settings, entry);
    return this.attempt(loaded, settings, callback, entry.lease);
  }

  /** Moves the job to later and throws DelayedError, which BullMQ does not count as an attempt. */
  private async postpone(job: DeliveryJob, token: string | undefined, delayMs: number, reason: string, moved?: () => Promise<void>): Promise<never> {
    if (!token) throw new Error('cannot delay a job without its lock token');
    deliveryJobsWithoutCall.inc({ reason });
    await job.moveToDelayed(Date.now() + delayMs, token);
    if (moved) await moved();
    throw new DelayedError(`delivery postponed by ${delayMs} ms`);
  }

  private async attempt(
    { event, loadStartedAt }: { event: PendingEvent; loadStartedAt: number },
    settings: AccountDeliverySettings,
    callback: CallbackBody,
    lease: Lease,
  ): Promise<DeliveryResult> {
    let exchange: Awaited<ReturnType<CallbackSender['send']>>;
    try {
      await this.erasure.beforeCall(event, loadStartedAt);
      exchange = await inSpan('delivery.call', () => this.sender.send(event, settings, callback));
    } catch (error) {
      // The call itself never throws (failures are results); a bug before it must not strand the lease.
      await this.admission.release(lease, { signal: 'neutral', error: null, durationMs: null, slowDown: null });
      if (error instanceof ErasedEventError) return this.recorder.settleWithoutCall(event, 'failed', 'erased', 'erased');
      if (error instanceof UnsignableCallbackError) return this.recorder.settleWithoutCall(event, 'failed', error.message, 'unsignable');
      throw error;
    }
    const { startedAt, headers, durationMs, result, responseBody, abandoned } = exchange;
    const { verdict, slowDown } = judgeCall(result, abandoned, Date.now());
    const attempt = attemptRowOf(event, settings, {
      startedAt,
      durationMs,
      requestHeaders: headers,
      requestBody: callback.body,
      responseStatus: result.kind === 'response' ? result.status : null,
      responseHeaders: result.kind === 'response' ? capHeaders(result.headers) : null,
      responseBody,
      error: verdict.error,
    });
    // The record does not wait for the endpoint to learn the outcome: every moment between the call's answer
    // and its row's commit is one in which a crash makes the event a duplicate. release never throws, so
    // the record's own failure is the only one Promise.all can report. An abandoned call says nothing about
    // the endpoint: the disabling clock does not learn from it either.
    const [recorded] = await Promise.all([
      this.recorder.recordCall(event, settings, attempt, verdict, { countsForHealth: !abandoned }),
      this.admission.release(lease, { signal: verdict.breakerSignal, error: verdict.error, durationMs, slowDown }),
    ]);
    return recorded;
  }
}
