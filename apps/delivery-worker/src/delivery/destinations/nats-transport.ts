import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { type ConnectionOptions, headers, type NatsConnection } from '@nats-io/nats-core';
import { connect as connectUntyped } from '@nats-io/transport-node';

// transport-node's declarations name nats-core's types through a subpath export (`/internal`) this
// tsconfig's module resolution does not read; they are the same package and version, imported directly.
const connect = connectUntyped as unknown as (options: ConnectionOptions) => Promise<NatsConnection>;
import { type BrokerConnection, brokerAddress } from './broker-connection-pool';
import type { OutgoingDelivery } from './destination-transport';
import { type BrokerTarget, parseBrokerUrl, PooledBrokerTransport } from './pooled-broker-transport';
import { redactCredentials } from './transport-outcome';

/** A NATS destination's URL, parsed: `nats://[user:pass@]host:port/<subject>`. */
export interface NatsTarget extends BrokerTarget {
  username: string;
  subject: string;
}

export function parseNatsTarget(url: string): NatsTarget | string {
  const parsed = parseBrokerUrl(url, ['nats'], true);
  if (typeof parsed === 'string') return parsed;
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

  /** nats.js has no harder end than close: its pending requests are rejected as it closes. */
  destroy(): void {
    this.closing = true;
    void this.nats.close().catch(() => undefined);
  }
}

/**
 * Publishes with JetStream (CONTRACT §11 `nats`): the attempt succeeds on the stream's ack, `Nats-Msg-Id`
 * is the event id (the stream drops a repeat within its duplicate window), the `webhook-*` values are
 * headers. The connection does not reconnect by itself: a dropped one is replaced on the next send.
 */
export class NatsTransport extends PooledBrokerTransport<NatsTarget, NatsBrokerConnection> {
  protected readonly label = 'nats';
  protected readonly acknowledgement = 'ack from the stream';
  protected readonly parse = parseNatsTarget;

  /** `nats://<token>@host` carries its token where a user name would be. */
  protected override credentialsOf(server: NatsTarget): (string | undefined)[] {
    return [server.password, server.password ? undefined : server.username, server.connectionUrl];
  }

  protected publish(connection: NatsBrokerConnection, server: NatsTarget, delivery: OutgoingDelivery, remainingMs: number): Promise<unknown> {
    const values = headers();
    for (const [name, value] of Object.entries(delivery.signatureHeaders)) values.set(name, value);
    values.set('content-type', delivery.contentType);
    return connection.jetstream.publish(server.subject, new TextEncoder().encode(delivery.body), { msgID: delivery.eventId, headers: values, timeout: remainingMs });
  }

  protected override reasonFor(error: unknown, text: string, server: NatsTarget, timeoutMs: number): string | null {
    // A JetStream publish nobody answers means no stream listens on the subject (or JetStream is off).
    if ((error as Error | null)?.name === 'JetStreamNotEnabled') return `no stream for subject ${server.subject}`;
    if (/timeout/i.test(text)) return `time-out: no ${this.acknowledgement} within ${timeoutMs} ms`;
    return null;
  }

  protected async connect(server: NatsTarget, key: string, connectTimeoutMs: number): Promise<NatsBrokerConnection> {
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
    return new NatsBrokerConnection(nats, (why, connection) =>
      this.dropped(key, connection, server, redactCredentials(why, [server.password, server.password ? undefined : server.username])),
    );
  }
}
