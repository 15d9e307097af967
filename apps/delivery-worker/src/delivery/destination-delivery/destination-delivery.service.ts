import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DelayedError } from 'bullmq';
import type Redis from 'ioredis';
import { DESTINATION_DELETED_ERROR, isAtStep } from '@app/persistence';
import { signWebhook } from '@app/signing';
import { deliveryJobId, destinationEndpointKey, ENVIRONMENT, type Environment, inSpan, loggableErrorText, type OutboundHttpClient, REDIS, SecretBox } from '@app/runtime';
import { AdmissionDoor, type Lease } from '../admission';
import { deliveryJobsWithoutCall } from '../delivery.metrics';
import type { DeliveryJob } from '../delivery-job';
import { ErasedEventError, ErasureCheck } from '../erasure-check';
import type { PendingEvent } from '../loading/event-loader';
import { circuitOpenError, type DeliveryResult } from '../outcome/outcome-recorder.service';
import { judgeAttempt, type Verdict } from '../outcome/retry-policy';
import { ABANDONED_MESSAGE, capHeaders, DELIVERY_HTTP_CLIENT } from '../request/callback-exchange';
import { encodeCallbackBody, USER_AGENT } from '../request/callback-request';
import { CLOUDEVENTS_CONTENT_TYPE, encodeCloudEvent } from '../destinations/cloudevents';
import type { DestinationAuth, OutgoingDelivery, TransportOutcome } from '../destinations/destination-transport';
import { DestinationTransports, destinationTransports } from '../destinations/destination-transports';
import { failed } from '../destinations/transport-outcome';
import { WorkerStoppingError } from '../worker-stopping-error';
import { DestinationDeliveryLoader, type DestinationRow } from './destination-delivery-loader';
import { DestinationOutcomes, disabledDestinationError } from './destination-outcomes';
import { SubjectHold } from './subject-hold';


/** A manual redelivery's first step always makes its call (passes an open breaker). */
function isRedeliveryStart(event: PendingEvent): boolean {
  return event.series > 0 && event.seriesAttempts === 0;
}

/** What a transport's outcome tells the retry schedule and the breaker, in the primary's words (judgeAttempt). */
export function verdictOf(outcome: TransportOutcome, nowMs: number): Verdict {
  if (outcome.ok) return { success: true, failureClass: null, breakerSignal: 'success', retryAfterMs: null, error: null };
  if (outcome.status !== undefined) {
    const judged = judgeAttempt({ kind: 'response', status: outcome.status, headers: outcome.responseHeaders ?? {} }, nowMs);
    return { ...judged, retryAfterMs: outcome.retryAfterMs ?? judged.retryAfterMs, error: outcome.reason };
  }
  return { success: false, failureClass: 'retryable', breakerSignal: 'failure', retryAfterMs: outcome.retryAfterMs ?? null, error: outcome.reason };
}

/**
 * One step of an event's delivery to one of its account's extra destinations (CONTRACT §11), the
 * primary's steps against other rows: load (delivery, event, destination) → decide (stale, destination
 * deleted, erased, paused, disabled, held by its subject) → admit (AdmissionDoor, keyed per
 * destination) → encode (udesk or CloudEvents) → sign with the destination's own secret → send through
 * its type's transport → record (DestinationOutcomes) and retry per §5.
 */
@Injectable()
export class DestinationDeliveryService implements OnApplicationShutdown {
  private readonly transports: DestinationTransports;
  private readonly timeoutMs: number;
  /** Ends each send still waiting for its answer (abandonInFlight). */
  private readonly waiting = new Set<() => void>();
  private abandoned = false;

  constructor(
    private readonly loader: DestinationDeliveryLoader,
    private readonly outcomes: DestinationOutcomes,
    private readonly admission: AdmissionDoor,
    private readonly erasure: ErasureCheck,
    private readonly secrets: SecretBox,
    private readonly order: SubjectHold,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    @Inject(REDIS) redis: Redis,
    @Inject(DELIVERY_HTTP_CLIENT) http: OutboundHttpClient,
  ) {
    this.timeoutMs = environment.delivery.timeoutMs;
    this.transports = destinationTransports({
      redis,
      redisPrefix: environment.redis.prefix,
      secretBox: secrets,
      allowPrivateTargets: environment.delivery.allowPrivateTargets,
      http,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transports.close();
  }

  /**
   * At shutdown, as the primary's CallbackSender: sends still waiting for an answer end now, recorded as
   * failed attempts (retried per schedule) that tell the destination's health nothing; none starts after.
   */
  abandonInFlight(): number {
    this.abandoned = true;
    const count = this.waiting.size;
    for (const stop of [...this.waiting]) stop();
    return count;
  }

  async deliver(job: DeliveryJob, token: string | undefined, destinationId: string): Promise<DeliveryResult> {
    const step = job.data;
    // The erasure check trusts its stamp only for loads that started after it was read (erasure-check.ts).
    const loadStartedAt = performance.now();
    const loaded = await this.loader.load(step.eventSeq, destinationId);
    const event = loaded?.event;
    if (!loaded || !event || !isAtStep(event, step)) {
      deliveryJobsWithoutCall.inc({ reason: 'stale' });
      return 'stale';
    }
    const { destination } = loaded;
    if (!destination || destination.deletedAt) return this.outcomes.settleWithoutCall(event, destinationId, DESTINATION_DELETED_ERROR, 'destination_deleted');
    if (loaded.erased) return this.outcomes.settleWithoutCall(event, destinationId, 'erased', 'erased');
    if (destination.paused) return this.outcomes.park(event, destinationId);
    const disabled = await this.outcomes.disabled(destination);
    if (disabled) return this.outcomes.settleWithoutCall(event, destinationId, disabledDestinationError(disabled), 'endpoint_disabled');
    if (destination.ordering === 'subject' && !isRedeliveryStart(event)) {
      const holdMs = await this.order.holdMs(event, destinationId);
      if (holdMs !== null) return this.postpone(job, token, holdMs, 'held_by_subject');
    }

    let body: { contentType: string; body: string };
    try {
      body = this.encode(event, destination);
    } catch (error) {
      const why = `cannot encode the ${destination.format} body (${destination.contentType}): ${loggableErrorText(error)}`;
      return this.outcomes.settleWithoutCall(event, destinationId, why, 'unencodable');
    }
    let endpointKey: string;
    let target: { url: string; auth: DestinationAuth | null; secret: string };
    try {
      target = this.open(destination);
      endpointKey = destinationEndpointKey(destination.accountId, destination.id, target.url);
    } catch (error) {
      return this.outcomes.settleWithoutCall(event, destinationId, `cannot open the destination's credentials: ${loggableErrorText(error)}`, 'unsignable');
    }
    const entry = await this.admission.admit({
      job: deliveryJobId(step),
      accountId: event.accountId,
      pushUrl: target.url,
      endpointKey,
      force: isRedeliveryStart(event),
      maxPerSecond: destination.maxPerSecond,
    });
    if (entry.kind === 'wait') return this.postpone(job, token, entry.ms, entry.reason);
    if (entry.kind === 'open') {
      deliveryJobsWithoutCall.inc({ reason: 'breaker_open' });
      const error = circuitOpenError(entry);
      const verdict: Verdict = { success: false, failureClass: 'retryable', breakerSignal: 'neutral', retryAfterMs: null, error };
      const skipped = this.attemptRow(event, destination, new Date(), 0, {}, '', null, error);
      return this.outcomes.recordAttempt(event, destination, skipped, verdict, true);
    }
    return this.attempt(event, loadStartedAt, destination, target, body, entry.lease);
  }

  private encode(event: PendingEvent, destination: DestinationRow): { contentType: string; body: string } {
    if (destination.format === 'cloudevents') {
      const source = this.environment.publicUrl;
      const body = encodeCloudEvent({ eventId: event.eventId, action: event.action, message: event.messageText, acceptedAt: event.createdAt, source });
      return { contentType: CLOUDEVENTS_CONTENT_TYPE, body };
    }
    // Brokers carry JSON; a webhook's body follows its content_type as the primary's does (CONTRACT §2).
    const json = destination.type !== 'webhook' || destination.contentType.toUpperCase() === 'JSON';
    return encodeCallbackBody(json ? 'json' : 'form', event.action, event.messageText);
  }

  private open(destination: DestinationRow): { url: string; auth: DestinationAuth | null; secret: string } {
    const auth = this.secrets.openNullable(destination.sealedAuth);
    return {
      url: this.secrets.open(destination.sealedTarget),
      auth: auth === null ? null : (JSON.parse(auth) as DestinationAuth),
      secret: this.secrets.open(destination.sealedSigningSecret),
    };
  }

  private async attempt(
    event: PendingEvent,
    loadStartedAt: number,
    destination: DestinationRow,
    target: { url: string; auth: DestinationAuth | null; secret: string },
    body: { contentType: string; body: string },
    lease: Lease,
  ): Promise<DeliveryResult> {
    const startedAt = new Date();
    let sent: { outcome: TransportOutcome; abandoned: boolean };
    let headers: OutgoingDelivery['signatureHeaders'];
    try {
      if (this.abandoned) throw new WorkerStoppingError();
      await this.erasure.beforeCall(event, loadStartedAt);
      headers = signWebhook([target.secret], event.eventId, Math.floor(startedAt.getTime() / 1000), body.body);
      const delivery: OutgoingDelivery = { eventId: event.eventId, body: body.body, contentType: body.contentType, signatureHeaders: headers };
      sent = await inSpan('delivery.call', () =>
        this.untilAbandoned(this.transports.send({ id: destination.id, type: destination.type, url: target.url, auth: target.auth }, delivery, this.timeoutMs)),
      );
    } catch (error) {
      await this.admission.release(lease, { signal: 'neutral', error: null, durationMs: null, slowDown: null });
      if (error instanceof ErasedEventError) return this.outcomes.settleWithoutCall(event, destination.id, 'erased', 'erased');
      throw error;
    }
    const { outcome, abandoned } = sent;
    const judged = verdictOf(outcome, Date.now());
    // An abandoned send says nothing about the destination: neither its breaker nor its disabling clock hear of it.
    const verdict: Verdict = abandoned ? { ...judged, breakerSignal: 'neutral' } : judged;
    const slowDown = outcome.status === 429 || outcome.status === 503 ? { retryAfterMs: verdict.retryAfterMs } : null;
    const requestHeaders = { 'content-type': body.contentType, 'user-agent': USER_AGENT, ...headers };
    const row = this.attemptRow(event, destination, startedAt, outcome.durationMs, requestHeaders, body.body, outcome, verdict.error);
    const [recorded] = await Promise.all([
      this.outcomes.recordAttempt(event, destination, row, verdict, !abandoned),
      this.admission.release(lease, { signal: verdict.breakerSignal, error: verdict.error, durationMs: outcome.durationMs, slowDown }),
    ]);
    return recorded;
  }

  /** The send's outcome, or a failed one as soon as abandonInFlight() is called (the send then ends on its own deadline). */
  private async untilAbandoned(send: Promise<TransportOutcome>): Promise<{ outcome: TransportOutcome; abandoned: boolean }> {
    const startedAt = performance.now();
    let stop: () => void = () => undefined;
    const abandonedSend = new Promise<null>((resolve) => {
      stop = () => resolve(null);
    });
    this.waiting.add(stop);
    try {
      const outcome = await Promise.race([send, abandonedSend]);
      if (outcome !== null) return { outcome, abandoned: false };
      send.catch(() => undefined);
      return { outcome: failed(startedAt, ABANDONED_MESSAGE), abandoned: true };
    } finally {
      this.waiting.delete(stop);
    }
  }

  private attemptRow(
    event: PendingEvent,
    destination: DestinationRow,
    startedAt: Date,
    durationMs: number,
    requestHeaders: Record<string, string>,
    requestBody: string,
    outcome: TransportOutcome | null,
    error: string | null,
  ) {
    return {
      eventSeq: event.seq,
      series: event.series,
      attempt: event.attempts + 1,
      startedAt,
      durationMs: Math.round(durationMs),
      url: destination.targetShown,
      requestHeaders,
      requestBody,
      responseStatus: outcome?.status ?? null,
      responseHeaders: outcome?.responseHeaders ? capHeaders(outcome.responseHeaders) : null,
      responseBody: outcome?.responseBody ?? null,
      error,
    };
  }

  /** Moves the job to later and throws DelayedError, which BullMQ does not count as an attempt. */
  private async postpone(job: DeliveryJob, token: string | undefined, delayMs: number, reason: string): Promise<never> {
    if (!token) throw new Error('cannot delay a job without its lock token');
    deliveryJobsWithoutCall.inc({ reason });
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError(`delivery postponed by ${delayMs} ms`);
  }
}
