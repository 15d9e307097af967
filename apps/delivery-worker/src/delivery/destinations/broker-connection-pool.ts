import { createHash } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DnsTimeoutError, isPublicAddress, lookupAddresses } from '@app/runtime';

/** What a pool needs of a broker client: a way to tell it is still usable and to end it. */
export interface BrokerConnection {
  readonly usable: boolean;
  /** Ends it politely (the protocol's close handshake): for idle and shutdown. */
  close(): Promise<void>;
  /**
   * Ends it at once, the socket destroyed without a handshake: for a broker that stopped answering,
   * whose close handshake would hang too. Every publish still pending on it fails, and the bodies it
   * held are freed.
   */
  destroy(): void;
}

export class BrokerConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrokerConnectError';
  }
}

/**
 * The address to dial for a broker host, resolved within DNS_TIMEOUT_MS (so the client library never
 * resolves on its own, unbounded), and checked against the private-address rule of §2 (and
 * BLOCKED_TARGET_RANGES) unless ALLOW_PRIVATE_TARGETS. The checked address is the one dialled, so a DNS
 * answer that changes between check and connect cannot slip past; the reason names only the host written.
 */
export async function brokerAddress(host: string, allowPrivateTargets: boolean): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const refused = new BrokerConnectError(`refused: broker host ${bare} points to a non-public address or does not resolve`);
  if (isIP(bare)) {
    if (!allowPrivateTargets && !isPublicAddress(bare)) throw refused;
    return bare;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAddresses(bare);
  } catch (error) {
    if (error instanceof DnsTimeoutError) throw new BrokerConnectError(`time-out: broker host ${bare} did not resolve within ${error.timeoutMs} ms`);
    if (allowPrivateTargets) throw new BrokerConnectError(`broker host ${bare} does not resolve`);
    throw refused;
  }
  if (addresses.length === 0 || (!allowPrivateTargets && !addresses.every((entry) => isPublicAddress(entry.address)))) throw refused;
  return addresses[0].address;
}

interface Entry<C> {
  connecting: Promise<C>;
  connection: C | null;
  users: number;
  idleTimer: NodeJS.Timeout | null;
}

/**
 * Connections to brokers (RabbitMQ, NATS, MQTT), one per broker URL: get-or-connect (concurrent sends
 * share one connect), a bound on connecting, closed once unused for `idleMs`, all closed at shutdown.
 * A connection found unusable (dropped by the broker) is replaced on the next send. Keys are hashed:
 * a broker URL may hold a password, and the map should not keep it as a readable key.
 */
export class BrokerConnectionPool<C extends BrokerConnection> {
  private readonly entries = new Map<string, Entry<C>>();
  private closed = false;

  constructor(private readonly options: { idleMs: number; connectTimeoutMs: number }) {}

  static keyOf(connectionUrl: string): string {
    return createHash('sha256').update(connectionUrl).digest('base64url');
  }

  get size(): number {
    return this.entries.size;
  }

  /** Runs `work` on the connection for `key` (connecting with `connect` if there is none usable). */
  async use<T>(key: string, connect: (connectTimeoutMs: number) => Promise<C>, timeoutMs: number, work: (connection: C) => Promise<T>): Promise<T> {
    if (this.closed) throw new BrokerConnectError('the worker is shutting down');
    let entry = this.entries.get(key);
    if (entry?.connection && !entry.connection.usable) {
      this.discard(key, entry);
      entry = undefined;
    }
    if (!entry) {
      entry = { connecting: this.connectWithin(connect, Math.min(timeoutMs, this.options.connectTimeoutMs)), connection: null, users: 0, idleTimer: null };
      const created = entry;
      this.entries.set(key, created);
      created.connecting.then(
        (connection) => {
          created.connection = connection;
        },
        () => {
          if (this.entries.get(key) === created) this.entries.delete(key);
        },
      );
    }
    entry.users += 1;
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = null;
    try {
      return await work(await entry.connecting);
    } finally {
      entry.users -= 1;
      if (entry.users === 0 && this.entries.get(key) === entry) {
        const idle = entry;
        idle.idleTimer = setTimeout(() => this.discard(key, idle), this.options.idleMs);
        idle.idleTimer.unref();
      }
    }
  }

  /** Ends one connection (idle, or found broken); the next send for its key connects anew. */
  discard(key: string, entry = this.entries.get(key)): void {
    if (!entry || this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.connecting.then((connection) => connection.close()).catch(() => undefined);
  }

  /**
   * A connection whose broker stopped acknowledging: out of the pool (if it is still the one pooled) and
   * destroyed now, even while other sends use it (their publishes wait on the same silent broker).
   */
  destroy(key: string, connection: C): void {
    const entry = this.entries.get(key);
    if (entry?.connection === connection) {
      this.entries.delete(key);
      if (entry.idleTimer) clearTimeout(entry.idleTimer);
    }
    connection.destroy();
  }

  /** A connection the broker dropped leaves the pool at once (not at its next use), if it is still the one pooled. */
  dropped(key: string, connection: C): void {
    const entry = this.entries.get(key);
    if (entry?.connection === connection && entry.users === 0) this.discard(key, entry);
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.idleTimer) clearTimeout(entry.idleTimer);
        await entry.connecting.then((connection) => connection.close()).catch(() => undefined);
      }),
    );
  }

  /** A connect that outlives its bound is closed when it finally completes, so no socket is left behind. */
  private connectWithin(connect: (connectTimeoutMs: number) => Promise<C>, connectTimeoutMs: number): Promise<C> {
    return new Promise<C>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        reject(new BrokerConnectError(`time-out: no connection to the broker within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      connect(connectTimeoutMs).then(
        (connection) => {
          clearTimeout(timer);
          if (settled) void connection.close().catch(() => undefined);
          else resolve(connection);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!settled) reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }
}
