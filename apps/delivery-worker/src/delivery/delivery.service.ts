import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, type Job, type Queue } from 'bullmq';
import { PENDING_EVENT_STATUSES } from '@app/persistence';
import { isEventAction, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import {
  DELIVERY_QUEUE,
  type DeliveryJobData,
  deliveryJob,
  deliveryJobId,
  endpointKeyOf,
  ENVIRONMENT,
  type Environment,
  isDatabaseUnavailable,
  OutboundError,
  OutboundHttpClient,
} from '@app/runtime';
import { type AccountDeliverySettings, AccountSettingsCache, signingSecretsAt } from './account-settings.cache';
import { type CallbackBody, callbackHeaders, encodeCallbackBody } from './callback-request';
import {
  breakerOpens,
  deliveryAttemptDuration,
  deliveryAttempts,
  deliveryDatabaseWaits,
  deliveryEventsSettled,
  deliveryJobsWithoutCall,
  deliveryLatency,
} from './delivery.metrics';
import { type AttemptRow, DeliveryStore, type EventChange, type PendingEvent } from './delivery-store';
import { type Admission, EndpointGuard, type EndpointLease } from './endpoint-guard';
import { type AttemptResult, computeRetryDelay, describeFailure, judgeAttempt, type Verdict } from './retry-policy';

const MAX_BUSY_HINTS = 10_000;
/** Pause of a job that met a database outage (spread ±50 %). */
const DATABASE_WAIT_MS = 5_000;

/** Response bodies and header maps are stored up to this many bytes (CONTRACT §3). */
export const MAX_STORED_RESPONSE_BYTES = 4096;

/** The provider token of the worker's outbound HTTP client (one keep-alive pool per origin). */
export const DELIVERY_HTTP_CLIENT = Symbol('DELIVERY_HTTP_CLIENT');

/** One HTTP exchange as it happened. */
interface Exchange {
  startedAt: Date;
  headers: Record<string, string>;
  durationMs: number;
  result: AttemptResult;
  responseBody: string | null;
}

/** What the service needs of a BullMQ job; unit tests hand in a plain object. */
export type DeliveryJob = Pick<Job<DeliveryJobData>, 'data' | 'attemptsStarted' | 'moveToDelayed'>;

export type DeliveryResult = 'stale' | 'superseded' | 'filtered' | 'no_endpoint' | 'delivered' | 'retrying' | 'failed';

/** Keeps response headers in order until their JSON reaches the storage cap. */
export function capHeaders(headers: Record<string, string>, maxBytes = MAX_STORED_RESPONSE_BYTES): Record<string, string> {
  const kept: Record<string, string> = {};
  let size = 2;
  for (const [name, value] of Object.entries(headers)) {
    const entry = Buffer.byteLength(JSON.stringify(name) + JSON.stringify(value)) + 2;
    if (size + entry > maxBytes) break;
    kept[name] = value;
    size += entry;
  }
  return kept;
}

/**
 * One delivery step of one event: decide (stale, no endpoint, filtered), encode and sign once, pass the
 * endpoint's concurrency share and circuit breaker, POST, record the attempt and the event's new status,
 * and schedule the next attempt. Knows nothing of BullMQ's worker; the processor hands jobs in.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger(DeliveryService.name);
  /** Job step → endpoint it last bounced off (bounded; only ever a shortcut, never a decision). */
  private readonly busyHints = new Map<string, string>();

  constructor(
    private readonly store: DeliveryStore,
    private readonly settings: AccountSettingsCache,
    private readonly guard: EndpointGuard,
    @Inject(DELIVERY_HTTP_CLIENT) private readonly http: Pick<OutboundHttpClient, 'post'>,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Pick<Queue, 'add'>,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

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
      throw new DelayedError(`PostgreSQL unavailable: ${(error as Error).message}`);
    }
  }

  private async deliverStep(job: DeliveryJob, token: string | undefined): Promise<DeliveryResult> {
    const step = job.data;
    const stepKey = deliveryJobId(step);
    const hinted = this.busyHints.get(stepKey);
    // A job that bounced off a full endpoint, and that endpoint is still full with this process's own
    // calls: bounce again at once, without loading anything (a burst to one endpoint cycles its backlog).
    if (hinted !== undefined && this.guard.isLocallyFull(hinted)) return this.bounce(job, token, hinted);

    const event = await this.store.loadEvent(step.eventSeq);
    if (
      !event ||
      !PENDING_EVENT_STATUSES.includes(event.status) ||
      event.series !== step.series ||
      event.seriesAttempts !== step.attempt
    ) {
      deliveryJobsWithoutCall.inc({ reason: 'stale' });
      return 'stale';
    }

    const settings = await this.settings.get(event.accountId);
    if (!settings?.pushUrl) {
      return this.settle(event, 'no_endpoint', settings ? 'no push_url is set' : `account ${event.accountId} does not exist`);
    }
    const permissionKey = isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null;
    if (!permissionKey) return this.settle(event, 'filtered', `unknown action ${event.action}`);
    if (settings.permissions[permissionKey] !== true) return this.settle(event, 'filtered', `permission ${permissionKey} is off`);

    const callback = encodeCallbackBody(settings.encoding, event.action, event.messageText);
    let endpointKey: string;
    try {
      endpointKey = endpointKeyOf(settings.pushUrl);
    } catch {
      // Not a URL at all: nothing to guard; recorded as a failed attempt like any other.
      return this.attempt(event, settings, callback, null);
    }

    const admission = await this.guard.acquire(endpointKey);
    if (admission.kind === 'busy') return this.bounce(job, token, endpointKey);
    this.busyHints.delete(stepKey);
    if (admission.kind !== 'admitted') return this.defer(job, token, event, admission);
    return this.attempt(event, settings, callback, admission.lease);
  }

  /** Every slot of the endpoint is taken: come back shortly, without spending an attempt. */
  private async bounce(job: DeliveryJob, token: string | undefined, endpointKey: string): Promise<never> {
    const stepKey = deliveryJobId(job.data);
    this.busyHints.delete(stepKey);
    if (this.busyHints.size >= MAX_BUSY_HINTS) this.busyHints.delete(this.busyHints.keys().next().value as string);
    this.busyHints.set(stepKey, endpointKey);
    deliveryJobsWithoutCall.inc({ reason: 'busy' });
    return this.postpone(job, token, this.guard.busyDelayMs(endpointKey));
  }

  /** Moves the job to later and throws DelayedError, which BullMQ does not count as an attempt. */
  private async postpone(job: DeliveryJob, token: string | undefined, delayMs: number): Promise<never> {
    if (!token) throw new Error('cannot delay a job without its lock token');
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError(`delivery postponed by ${delayMs} ms`);
  }

  private async settle(event: PendingEvent, status: 'no_endpoint' | 'filtered', why: string): Promise<DeliveryResult> {
    const applied = await this.store.record({
      attempt: null,
      change: { ...this.guardOf(event), status, attempted: 0, nextAttemptAt: null, deliveredAt: null, lastError: why },
    });
    if (!applied) return 'superseded';
    deliveryJobsWithoutCall.inc({ reason: status });
    deliveryEventsSettled.inc({ status });
    return status;
  }

  /**
   * The breaker is open or probing: wait without spending an attempt (throws DelayedError); returns
   * only when the row moved on meanwhile (the job then has nothing left to do).
   */
  private async defer(
    job: DeliveryJob,
    token: string | undefined,
    event: PendingEvent,
    admission: Extract<Admission, { kind: 'open' }>,
  ): Promise<DeliveryResult> {
    const { breakerCooldownMs } = this.environment.delivery;
    if (admission.probing) {
      // A probe is deciding: look again soon, but not before it can have finished or a cooldown passed.
      const ceiling = Math.max(250, breakerCooldownMs);
      deliveryJobsWithoutCall.inc({ reason: 'breaker_probing' });
      return this.postpone(job, token, Math.round(Math.min(Math.max(admission.waitMs, 250), ceiling) * (0.5 + Math.random() * 0.5)));
    }
    // Spread the wake-ups after the cooldown: only one of them becomes the probe anyway.
    const delayMs = admission.waitMs + Math.round(Math.random() * Math.min(breakerCooldownMs * 0.2, 5000));
    const failures = admission.consecutiveFailures;
    const applied = await this.store.record({
      attempt: null,
      change: {
        ...this.guardOf(event),
        status: null,
        attempted: 0,
        nextAttemptAt: new Date(Date.now() + delayMs),
        deliveredAt: null,
        lastError:
          `circuit open until ${admission.retryAt.toISOString()} after ${failures} consecutive failure${failures === 1 ? '' : 's'}` +
          (admission.lastError ? `: ${admission.lastError}` : ''),
      },
    });
    deliveryJobsWithoutCall.inc({ reason: 'breaker_open' });
    // The row moved on meanwhile (e.g. an operator redelivered): this job is done.
    if (!applied) return 'superseded';
    return this.postpone(job, token, delayMs);
  }

  private async attempt(
    event: PendingEvent,
    settings: AccountDeliverySettings,
    callback: CallbackBody,
    lease: EndpointLease | null,
  ): Promise<DeliveryResult> {
    let exchange: Exchange;
    try {
      exchange = await this.call(event, settings, callback);
    } catch (error) {
      // The call itself never throws (failures are results); a bug before it must not strand the slot.
      if (lease) await this.guard.release(lease, 'neutral', null).catch(() => undefined);
      throw error;
    }
    const { startedAt, headers, durationMs, result, responseBody } = exchange;
    const url = settings.pushUrl ?? '';
    const verdict = judgeAttempt(result, Date.now());
    if (lease) await this.releaseLease(lease, verdict, durationMs);

    const attempt: AttemptRow = {
      eventSeq: event.seq,
      series: event.series,
      attempt: event.attempts + 1,
      startedAt,
      durationMs,
      url,
      requestHeaders: headers,
      requestBody: callback.body,
      responseStatus: result.kind === 'response' ? result.status : null,
      responseHeaders: result.kind === 'response' ? capHeaders(result.headers) : null,
      responseBody,
      error: verdict.error,
    };
    const { change, retryInMs } = this.nextStep(event, verdict);
    const applied = await this.store.record({ attempt, change });

    const outcome = verdict.success ? 'delivered' : (verdict.failureClass ?? 'failed');
    deliveryAttempts.inc({ outcome });
    deliveryAttemptDuration.observe({ outcome }, durationMs / 1000);
    if (!applied) return 'superseded';
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
    const next = deliveryJob({ eventSeq: event.seq, series: event.series, attempt: event.seriesAttempts + 1 }, retryInMs ?? 0);
    await this.queue.add(next.name, next.data, next.opts);
    return 'retrying';
  }

  /** Signs for this moment and POSTs; every failure comes back as a result, never as an exception. */
  private async call(event: PendingEvent, settings: AccountDeliverySettings, callback: CallbackBody): Promise<Exchange> {
    const startedAt = new Date();
    const headers = callbackHeaders(callback, {
      id: event.eventId,
      timestampSeconds: Math.floor(startedAt.getTime() / 1000),
      secrets: signingSecretsAt(settings, startedAt.getTime()),
    });
    const started = performance.now();
    try {
      const response = await this.http.post({
        url: settings.pushUrl ?? '',
        headers,
        body: callback.body,
        timeoutMs: this.environment.delivery.timeoutMs,
        maxResponseBytes: MAX_STORED_RESPONSE_BYTES,
      });
      return {
        startedAt,
        headers,
        durationMs: Math.round(performance.now() - started),
        result: { kind: 'response', status: response.status, headers: response.headers },
        responseBody: response.body,
      };
    } catch (error) {
      return {
        startedAt,
        headers,
        durationMs: Math.round(performance.now() - started),
        result:
          error instanceof OutboundError
            ? { kind: 'error', failure: error.kind, message: error.message }
            : { kind: 'error', failure: 'connection', message: error instanceof Error ? error.message : String(error) },
        responseBody: null,
      };
    }
  }

  private nextStep(event: PendingEvent, verdict: Verdict): { change: EventChange; retryInMs: number | null } {
    const now = new Date();
    const base = { ...this.guardOf(event), attempted: 1 as const };
    if (verdict.success) {
      return { change: { ...base, status: 'delivered', nextAttemptAt: null, deliveredAt: now, lastError: null }, retryInMs: null };
    }
    const attemptsMade = event.seriesAttempts + 1;
    const retryInMs = computeRetryDelay({
      scheduleMs: this.environment.delivery.retryScheduleMs,
      attemptsMade,
      failureClass: verdict.failureClass ?? 'retryable',
      retryAfterMs: verdict.retryAfterMs,
    });
    if (retryInMs === null) {
      return {
        change: {
          ...base,
          status: 'failed',
          nextAttemptAt: null,
          deliveredAt: null,
          lastError: describeFailure(verdict, { exhaustedAfter: attemptsMade }),
        },
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

  /** The breaker only learns, it never decides the attempt: a Redis hiccup here must not lose the record. */
  private async releaseLease(lease: EndpointLease, verdict: Verdict, durationMs: number): Promise<void> {
    try {
      const answer = await this.guard.release(lease, verdict.breakerSignal, verdict.error, durationMs);
      await this.guard.indexChange(lease.endpointKey, answer.change);
      if (answer.change === 'opened') {
        breakerOpens.inc();
        this.logger.warn(
          `circuit opened for ${lease.endpointKey} after ${answer.consecutiveFailures} consecutive failures (${verdict.error ?? 'failed'})`,
        );
      } else if (answer.change === 'closed') {
        this.logger.log(`circuit closed for ${lease.endpointKey}`);
      }
    } catch (error) {
      // The lease expires by itself; the attempt is still recorded below.
      this.logger.warn(`could not release the endpoint lease of ${lease.endpointKey}: ${(error as Error).message}`);
    }
  }

  private guardOf(event: PendingEvent): Pick<EventChange, 'seq' | 'series' | 'seriesAttempts'> {
    return { seq: event.seq, series: event.series, seriesAttempts: event.seriesAttempts };
  }
}
