import { Logger } from '@nestjs/common';
import { OutboundHttpClient, type RedisClient, type SecretBox } from '@app/runtime';
import { ClientCertificateAgents } from './client-certificate-agents';
import type { DestinationTarget, DestinationTransport, DestinationType, OutgoingDelivery, TransportOutcome } from './destination-transport';
import { OAuth2TokenCache } from './oauth2-token-cache';
import { MqttTransport } from './mqtt-transport';
import { NatsTransport } from './nats-transport';
import { RabbitMqTransport } from './rabbitmq-transport';
import { failed, reasonOf, type TransportLogger } from './transport-outcome';
import { WebhookTransport } from './webhook-transport';

export type { TransportLogger } from './transport-outcome';

export interface DestinationTransportsOptions {
  redis: RedisClient;
  /** REDIS_PREFIX: OAuth2 tokens are shared by every worker under it. */
  redisPrefix: string;
  secretBox: SecretBox;
  allowPrivateTargets: boolean;
  /** The worker's outbound HTTP client (shared with the primary); one of its own when absent. */
  http?: OutboundHttpClient;
  logger?: TransportLogger;
  /** Broker connections and mTLS pools unused this long are closed. */
  idleCloseMs?: number;
  /** Bound on opening a broker connection (the attempt's own time-out bounds it too). */
  connectTimeoutMs?: number;
  /** Publishes waiting for a broker's acknowledgement on one connection at most (MAX_PENDING_PUBLISHES_PER_CONNECTION). */
  maxPendingPublishesPerConnection?: number;
}

/** Every secret a target holds, to mask in any text that could quote it. */
function credentialsOf(target: DestinationTarget): string[] {
  const credentials: string[] = [];
  try {
    const url = new URL(target.url);
    if (url.password) credentials.push(url.password, decodeURIComponent(url.password));
  } catch {
    // not a URL: nothing to take from it
  }
  const auth = target.auth;
  if (auth?.type === 'header') credentials.push(auth.value);
  if (auth?.type === 'oauth2') credentials.push(auth.client_secret);
  if (auth?.type === 'mtls') credentials.push(auth.private_key);
  return credentials;
}

/**
 * The transport of every destination type (CONTRACT §11), one instance each per worker: `send` picks
 * the target's. Holds the pools (broker connections, mTLS agents) that `close()` ends at shutdown.
 */
export class DestinationTransports implements DestinationTransport {
  readonly byType: Readonly<Record<DestinationType, DestinationTransport>>;
  private readonly ownHttp: OutboundHttpClient | null;
  private readonly certificates: ClientCertificateAgents;
  private readonly brokers: { close(): Promise<void> }[];

  constructor(options: DestinationTransportsOptions) {
    const idleCloseMs = options.idleCloseMs ?? 60_000;
    this.ownHttp = options.http ? null : new OutboundHttpClient({ allowPrivateTargets: options.allowPrivateTargets });
    const http = options.http ?? (this.ownHttp as OutboundHttpClient);
    this.certificates = new ClientCertificateAgents(options.allowPrivateTargets, idleCloseMs);
    const tokens = new OAuth2TokenCache(options.redis, options.redisPrefix, options.secretBox, http);
    const logger = options.logger ?? new Logger('DestinationTransports');
    const brokerOptions = {
      idleMs: idleCloseMs,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      ...(options.maxPendingPublishesPerConnection !== undefined ? { maxPendingPerConnection: options.maxPendingPublishesPerConnection } : {}),
    };
    const rabbitmq = new RabbitMqTransport(options.allowPrivateTargets, logger, brokerOptions);
    const nats = new NatsTransport(options.allowPrivateTargets, logger, brokerOptions);
    const mqtt = new MqttTransport(options.allowPrivateTargets, logger, brokerOptions);
    this.brokers = [rabbitmq, nats, mqtt];
    this.byType = {
      webhook: new WebhookTransport(http, tokens, this.certificates),
      rabbitmq,
      nats,
      mqtt,
    };
  }

  /** mTLS pools open now, one per destination presenting a client certificate (each closes once unused). */
  get clientCertificatePools(): number {
    return this.certificates.size;
  }

  send(target: DestinationTarget, delivery: OutgoingDelivery, timeoutMs: number): Promise<TransportOutcome> {
    const transport = this.byType[target.type] as DestinationTransport | undefined;
    if (!transport) return Promise.resolve({ ok: false, durationMs: 0, reason: `no transport for destination type ${String(target.type).slice(0, 32)}` });
    const startedAt = performance.now();
    // Transports answer every failure as an outcome; this keeps a bug in one from failing the job instead.
    return transport.send(target, delivery, timeoutMs).catch((error: unknown) => failed(startedAt, `transport error: ${reasonOf(error, credentialsOf(target))}`));
  }

  async close(): Promise<void> {
    await Promise.all(this.brokers.map((broker) => broker.close()));
    await this.certificates.close();
    await this.ownHttp?.close();
  }
}

/** The registry dest-core wires into the worker: one transport per destination type. */
export function destinationTransports(options: DestinationTransportsOptions): DestinationTransports {
  return new DestinationTransports(options);
}
