import { BrokerConnectError, type BrokerConnection, BrokerConnectionPool } from './broker-connection-pool';
import type { DestinationTarget, DestinationTransport, OutgoingDelivery, TransportOutcome } from './destination-transport';
import { elapsedMs, failed, reasonOf, type TransportLogger, withinDeadline } from './transport-outcome';

/** Publishes waiting for the broker's acknowledgement on one connection at most, by default. */
export const MAX_PENDING_PUBLISHES_PER_CONNECTION = 256;

export interface BrokerTransportOptions {
  idleMs: number;
  connectTimeoutMs: number;
  /** Publishes waiting for an acknowledgement on one connection at most; past it a send fails at once. */
  maxPendingPerConnection?: number;
}

/** What every broker's parsed target has: the connection it shares with other destinations, and what to mask. */
export interface BrokerTarget {
  host: string;
  port: number;
  password: string;
  /** Everything that picks the connection (not the exchange, subject or topic): the pool's key. */
  connectionUrl: string;
}

/**
 * The checks every broker's target URL passes before its own: a URL, one of the broker's `schemes`, and a
 * host. `refuseFragment`: a raw `#` would start the URL's fragment and silently cut the rest off (MQTT
 * reads it as its wildcard instead, and refuses it in its topic check).
 */
export function parseBrokerUrl(url: string, schemes: readonly string[], refuseFragment: boolean): URL | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'target is not a valid URL';
  }
  if (!schemes.some((scheme) => parsed.protocol === `${scheme}:`)) return `target must use ${schemes.join(' or ')}`;
  if (refuseFragment && url.includes('#')) return 'target must not contain a raw # (write %23)';
  if (!parsed.hostname) return 'target has no host';
  return parsed;
}

/**
 * One send to a message broker, the same for RabbitMQ, NATS and MQTT: parse the target, take (or open)
 * the broker's pooled connection, publish, and wait for the broker's acknowledgement within the
 * attempt's time-out. Whatever goes wrong (a refused or hanging connection, a dropped one, a broker
 * that says no) is a failed attempt with a reason that holds no credential, never a thrown error or a
 * stuck call. Each broker says how to parse, connect and publish, and what its acknowledgement is called.
 *
 * A broker that takes publishes and never acknowledges them must not make the worker hold their bodies:
 * a send that times out destroys its connection (every publish pending on it fails, the client's buffers
 * go with the socket, and the next send connects anew), and at most `maxPendingPerConnection` publishes
 * wait on one connection at a time (a send past that fails at once, without a body queued).
 */
export abstract class PooledBrokerTransport<Target extends BrokerTarget, Connection extends BrokerConnection> implements DestinationTransport {
  protected readonly pool: BrokerConnectionPool<Connection>;
  private readonly maxPending: number;
  private readonly pendingByConnection = new WeakMap<Connection, number>();
  /** Connections destroyed because their broker stopped acknowledging: the other publishes on them failed for that. */
  private readonly silenced = new WeakSet<Connection>();
  private pendingTotal = 0;

  constructor(
    protected readonly allowPrivateTargets: boolean,
    protected readonly logger: TransportLogger,
    options: BrokerTransportOptions,
  ) {
    this.pool = new BrokerConnectionPool(options);
    this.maxPending = options.maxPendingPerConnection ?? MAX_PENDING_PUBLISHES_PER_CONNECTION;
  }

  /** `rabbitmq`, `nats`, `mqtt`: the prefix of a broker's own error in a reason. */
  protected abstract readonly label: string;
  /** What the broker's acknowledgement is, for the time-out's reason (`confirm from the broker`). */
  protected abstract readonly acknowledgement: string;
  /** The destination's URL read as this broker's target, or why it cannot be one. */
  protected abstract readonly parse: (url: string) => Target | string;
  protected abstract connect(target: Target, key: string, connectTimeoutMs: number): Promise<Connection>;
  /** Resolves once the broker acknowledged the message; `remainingMs` is what is left of the attempt's time-out. */
  protected abstract publish(connection: Connection, target: Target, delivery: OutgoingDelivery, remainingMs: number): Promise<unknown>;

  /** The values a reason must never show (password, token, the connection URL). */
  protected credentialsOf(target: Target): (string | undefined)[] {
    return [target.password, target.connectionUrl];
  }

  /** A broker's own reading of an error (e.g. NATS's "no stream"); null: the common one. */
  protected reasonFor(_error: unknown, _text: string, _target: Target, _timeoutMs: number): string | null {
    return null;
  }

  /** Broker connections open now (each closes after being unused for the idle time). */
  get openConnections(): number {
    return this.pool.size;
  }

  /** Publishes waiting for an acknowledgement now, over every connection. */
  get pendingPublishes(): number {
    return this.pendingTotal;
  }

  /** One publish counted against its connection's bound while it waits for the acknowledgement. */
  private async publishBounded(connection: Connection, target: Target, delivery: OutgoingDelivery, remainingMs: number): Promise<unknown> {
    const pending = this.pendingByConnection.get(connection) ?? 0;
    if (pending >= this.maxPending) {
      throw new BrokerConnectError(`time-out: ${pending} publishes already wait for the broker's ${this.acknowledgement.replace(/ from the .*$/, '')} on this connection`);
    }
    this.pendingByConnection.set(connection, pending + 1);
    this.pendingTotal += 1;
    try {
      return await this.publish(connection, target, delivery, remainingMs);
    } finally {
      this.pendingByConnection.set(connection, (this.pendingByConnection.get(connection) ?? 1) - 1);
      this.pendingTotal -= 1;
    }
  }

  async send(destination: DestinationTarget, delivery: OutgoingDelivery, timeoutMs: number): Promise<TransportOutcome> {
    const startedAt = performance.now();
    const target = this.parse(destination.url);
    if (typeof target === 'string') return failed(startedAt, target);
    const key = BrokerConnectionPool.keyOf(target.connectionUrl);
    let publishingOn: Connection | null = null;
    const published = this.pool.use(
      key,
      (connectTimeoutMs) => this.connect(target, key, connectTimeoutMs),
      timeoutMs,
      (connection) => {
        publishingOn = connection;
        return this.publishBounded(connection, target, delivery, Math.max(1, timeoutMs - elapsedMs(startedAt)));
      },
    );
    const timedOut = `time-out: no ${this.acknowledgement} within ${timeoutMs} ms`;
    try {
      const outcome = await withinDeadline<TransportOutcome | null>(
        published.then(() => null),
        Math.max(1, timeoutMs - elapsedMs(startedAt)),
        () => {
          // Published and never acknowledged: the broker is silent, so its connection goes now.
          if (publishingOn !== null) {
            this.silenced.add(publishingOn);
            this.pool.destroy(key, publishingOn);
            this.logger.warn(`${this.label}: no ${this.acknowledgement} from ${target.host}:${target.port} within ${timeoutMs} ms; connection destroyed, the next send reconnects`);
          }
          return failed(startedAt, timedOut);
        },
      );
      return outcome ?? { ok: true, durationMs: elapsedMs(startedAt) };
    } catch (error) {
      if (publishingOn !== null && this.silenced.has(publishingOn)) {
        return failed(startedAt, `time-out: no ${this.acknowledgement} (the connection was destroyed: the broker stopped acknowledging)`);
      }
      const text = reasonOf(error, this.credentialsOf(target));
      const own = this.reasonFor(error, text, target, timeoutMs);
      if (own !== null) return failed(startedAt, own);
      return failed(startedAt, error instanceof BrokerConnectError || /^time-out|^refused/.test(text) ? text : `${this.label}: ${text}`);
    }
  }

  /** The pool forgets a connection the broker dropped; the next send opens a new one. */
  protected dropped(key: string, connection: Connection, target: Target, why: string): void {
    this.pool.dropped(key, connection);
    this.logger.warn(`${this.label}: connection to ${target.host}:${target.port} closed (${why}); the next send reconnects`);
  }

  async close(): Promise<void> {
    await this.pool.closeAll();
  }
}
