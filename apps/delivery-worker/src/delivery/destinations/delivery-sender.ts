import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { callbackTraceHeaders, ENVIRONMENT, type Environment, type OutboundHttpClient, REDIS, type RedisClient, SecretBox, workerStageStamps } from '@app/runtime';
import { type DeliveryBody, headersToStore } from '@app/payloads';
import { PRIMARY_DESTINATION_ID } from '@app/persistence';
import { type DestinationSettings, signingSecretsAt } from './destination-settings.cache';
import { DestinationTransports } from './destination-transports';
import type { TransportOutcome } from './destination-transport';
import { failed } from './transport-outcome';
import { WorkerStoppingError } from '../worker-stopping-error';
import { signatureHeaders, USER_AGENT } from './user-agent';

/** The provider token of the worker's outbound HTTP client (one keep-alive pool per origin). */
export const DELIVERY_HTTP_CLIENT = Symbol('DELIVERY_HTTP_CLIENT');

/** What an abandoned send records: the receiver may or may not have seen it, so it is retried (same webhook-id). */
export const ABANDONED_MESSAGE = 'connection failed: abandoned: the worker shut down before the receiver answered';

/** The delivery could not be signed (e.g. an unreadable signing secret): no call can ever be made for it. */
export class UnsignableCallbackError extends Error {
  constructor(cause: unknown) {
    super(`cannot sign the callback: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** One send as it happened. */
export interface Exchange {
  startedAt: Date;
  /**
   * The headers sent, as the attempt keeps them (headersToStore: less what its row and event rebuild);
   * none of them is secret (auth headers are the transport's and never stored).
   */
  storedHeaders: Record<string, string>;
  outcome: TransportOutcome;
  /** The worker stopped waiting for the answer (shutdown); says nothing about the destination. */
  abandoned: boolean;
}

/**
 * Signs for this moment and sends through the destination type's transport; every failure comes back
 * as an outcome, never as an exception. At shutdown `abandon()` ends the sends still waiting for an
 * answer at once, so the worker can record them (as failed attempts, retried per schedule) and exit
 * without waiting out DELIVERY_TIMEOUT_MS.
 */
@Injectable()
export class DeliverySender implements OnApplicationShutdown {
  private readonly waiting = new Set<() => void>();
  private abandoned = false;
  private readonly transports: DestinationTransports;
  private readonly timeoutMs: number;

  constructor(
    @Inject(ENVIRONMENT) environment: Environment,
    @Inject(REDIS) redis: RedisClient,
    secretBox: SecretBox,
    @Inject(DELIVERY_HTTP_CLIENT) http: OutboundHttpClient,
  ) {
    this.timeoutMs = environment.delivery.timeoutMs;
    this.transports = new DestinationTransports({
      redis,
      redisPrefix: environment.redis.prefix,
      secretBox,
      allowPrivateTargets: environment.delivery.allowPrivateTargets,
      http,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transports.close();
  }

  get inFlight(): number {
    return this.waiting.size;
  }

  abandon(): number {
    this.abandoned = true;
    const count = this.waiting.size;
    for (const stop of [...this.waiting]) stop();
    return count;
  }

  async send(delivery: { seq: string; eventId: string; destinationId: string }, destination: DestinationSettings, body: DeliveryBody): Promise<Exchange> {
    const startedAt = new Date();
    if (this.abandoned) throw new WorkerStoppingError();
    let signed: ReturnType<typeof signatureHeaders>;
    try {
      signed = signatureHeaders({ id: delivery.eventId, timestampSeconds: Math.floor(startedAt.getTime() / 1000), secrets: signingSecretsAt(destination, startedAt.getTime()) }, body.body);
    } catch (error) {
      throw new UnsignableCallbackError(error);
    }
    const extraHeaders = destination.type === 'webhook' ? callbackTraceHeaders() : {};
    const storedHeaders = headersToStore(
      { 'content-type': body.contentType, 'user-agent': USER_AGENT, ...signed, ...extraHeaders },
      { contentType: body.contentType, eventId: delivery.eventId, startedAt },
    );
    const stamped = delivery.destinationId === PRIMARY_DESTINATION_ID;
    if (stamped) workerStageStamps.callStarted(delivery.seq);
    const started = performance.now();
    let stop: () => void = () => undefined;
    const abandonedSend = new Promise<null>((resolve) => (stop = () => resolve(null)));
    this.waiting.add(stop);
    const sending = this.transports.send(
      { id: `${destination.accountId}/${destination.id}`, type: destination.type, url: destination.url ?? '', auth: destination.auth },
      { eventId: delivery.eventId, body: body.body, contentType: body.contentType, signatureHeaders: signed, extraHeaders },
      this.timeoutMs,
    );
    try {
      const outcome = await Promise.race([sending, abandonedSend]);
      if (outcome !== null) return { startedAt, storedHeaders, outcome, abandoned: false };
      // The send itself ends with its own deadline or when the process exits.
      sending.catch(() => undefined);
      return { startedAt, storedHeaders, outcome: failed(started, ABANDONED_MESSAGE, { failure: 'connection' }), abandoned: true };
    } finally {
      this.waiting.delete(stop);
      if (stamped) workerStageStamps.answered(delivery.seq);
    }
  }
}
