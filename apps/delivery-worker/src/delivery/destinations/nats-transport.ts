import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { type ConnectionOptions, headers, type NatsConnection } from '@nats-io/nats-core';
import { connect as connectUntyped } from '@nats-io/transport-node';

// transport-node's declarations name nats-core's types through a subpath export (`/internal`) this
// tsconfig's module resolution does not read; they are the same package and version, imported directly.
const connect = connectUntyped as unknown as (options: ConnectionOptions) => Promise<NatsConnection>;
import { BrokerConnectError, type BrokerConnection, BrokerConnectionPool, brokerAddress } from './broker-connection-pool';
import type { DestinationTarget, DestinationTransport, OutgoingDelivery, TransportOutcome } from './destination-transport';
import { elapsedMs, failed, reasonOf, redactCredentials, type TransportLogger, withinDeadline } from './transport-outcome';

/** A NATS destination's URL, parsed: `nats://[user:pass@]host:port/<subject>`. */
export interface NatsTarget {
  host: string;
  port: number;
  username: string;
  password: string;
  subject: string;
  connectionUrl: string;
}

export function parseNatsTarget(url: string): NatsTarget | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'target is not a valid URL';
  }
  if (parsed.protocol !== 'nats:') return 'target must use nats';
  // A raw `#` starts the URL's fragment and would silently cut the rest off.
  if (url.includes('#')) return 'target must not contain a raw # (write %23)';
  if (!parsed.hostname) return 'target has no host';
  const subject = decodeURIComponent(parsed.pathname.slice(1));
  // JetStream publishes go to one literal subject: no wildcard, no empty token, no whitespace.
  if (!/^[^\s.*>]+(\.[^\s.*>]+)*$/.test(subject)) return 'target must name one subject after the host (nats://host:port/<subject>)';
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 4222,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    subject,
    connectionUrl: `nats://${parsed.username}:${parsed.password}@${parsed.host}`,
  };
}

class NatsBrokerConnection implements BrokerConnection {
  readonly jetstream: JetStreamClient;
  private closing = false;

  constructor(
    readonly nats: NatsConnection,
    onDrop: (why: string, connection: NatsBrokerConnection) => void,
  ) {
    this.jetstream = jetstream(nats);
    nats
      .closed()
      .then((error: Error | void) => {
        if (!this.closing) onDrop(error ? error.message : 'closed by the server', this);
      })
      .catch(() => undefined);
  }

  get usable(): boolean {
    return !this.nats.isClosed() && !this.nats.isDraining();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.nats.close().catch(() => undefined);
  }
}

/**
 * Publishes with JetStream (CONTRACT §11 `nats`): the attempt succeeds on the stream's ack, `Nats-Msg-Id`
 * is the event id (the stream drops a repeat within its duplicate window), the `webhook-*` values are
 * headers. The connection does not reconnect by itself: a dropped one is replaced on the next send.
 */
export class NatsTransport implements DestinationTransport {
  private readonly pool: BrokerConnectionPool<NatsBrokerConnection>;

  constructor(
    private readonly allowPrivateTargets: boolean,
    private readonly logger: TransportLogger,
    options: { idleMs: number; connectTimeoutMs: number },
  ) {
    this.pool = new BrokerConnectionPool(options);
  }

  get openConnections(): number {
    return this.pool.size;
  }

  async send(target: DestinationTarget, delivery: OutgoingDelivery, timeoutMs: number): Promise<TransportOutcome> {
    const startedAt = performance.now();
    const server = parseNatsTarget(target.url);
    if (typeof server === 'string') return failed(startedAt, server);
    const credentials = [server.password, server.password ? undefined : server.username, server.connectionUrl];
    const key = BrokerConnectionPool.keyOf(server.connectionUrl);
    const publish = this.pool.use(key, (connectTimeoutMs) => this.connect(server, key, connectTimeoutMs), timeoutMs, async (connection) => {
      const values = headers();
      for (const [name, value] of Object.entries(delivery.signatureHeaders)) values.set(name, value);
      values.set('content-type', delivery.contentType);
      const remaining = Math.max(1, timeoutMs - elapsedMs(startedAt));
      return connection.jetstream.publish(server.subject, new TextEncoder().encode(delivery.body), { msgID: delivery.eventId, headers: values, timeout: remaining });
    });
    try {
      const outcome = await withinDeadline<TransportOutcome | null>(
        publish.then(() => null),
        Math.max(1, timeoutMs - elapsedMs(startedAt)),
        () => failed(startedAt, `time-out: no ack from the stream within ${timeoutMs} ms`),
      );
      return outcome ?? { ok: true, durationMs: elapsedMs(startedAt) };
    } catch (error) {
      // A JetStream publish nobody answers means no stream listens on the subject (or JetStream is off).
      if ((error as Error | null)?.name === 'JetStreamNotEnabled') return failed(startedAt, `no stream for subject ${server.subject}`);
      const text = reasonOf(error, credentials);
      if (/timeout/i.test(text)) return failed(startedAt, `time-out: no ack from the stream within ${timeoutMs} ms`);
      return failed(startedAt, error instanceof BrokerConnectError ? text : `nats: ${text}`);
    }
  }

  private async connect(server: NatsTarget, key: string, connectTimeoutMs: number): Promise<NatsBrokerConnection> {
    const address = await brokerAddress(server.host, this.allowPrivateTargets);
    const hostPort = address.includes(':') ? `[${address}]:${server.port}` : `${address}:${server.port}`;
    const nats = await connect({
      servers: hostPort,
      timeout: connectTimeoutMs,
      reconnect: false,
      name: 'event-callbacks destinations',
      // `nats://<token>@host` is NATS's token form; `user:pass@` its user and password.
      ...(server.username && server.password ? { user: server.username, pass: server.password } : server.username ? { token: server.username } : {}),
    });
    return new NatsBrokerConnection(nats, (why, connection) => {
      this.pool.dropped(key, connection);
      this.logger.warn(`nats: connection to ${server.host}:${server.port} closed (${redactCredentials(why, [server.password, server.password ? undefined : server.username])}); the next send reconnects`);
    });
  }

  async close(): Promise<void> {
    await this.pool.closeAll();
  }
}
