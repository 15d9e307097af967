import { FakeBrokerConnection } from '../../../test/broker-connection.fakes';
import type { OutgoingDelivery, TransportOutcome } from './destination-transport';
import { type BrokerTarget, type BrokerTransportOptions, PooledBrokerTransport } from './pooled-broker-transport';
import { redactCredentials, type TransportLogger } from './transport-outcome';

const PASSWORD = 's3cret-broker-pw';

interface MemoryTarget extends BrokerTarget {
  topic: string;
}

/** What the in-memory broker does with the next connects and publishes. */
class MemoryBroker {
  connects = 0;
  connectFailure: Error | null = null;
  acknowledging: 'ack' | 'silent' = 'ack';
  publishFailure: Error | null = null;
  readonly connections: MemoryConnection[] = [];
  readonly acknowledged: { connection: MemoryConnection; connectionUrl: string; topic: string; body: string }[] = [];
}

/** Holds every unacknowledged body, as a client library's buffers would, until acknowledged or destroyed. */
class MemoryConnection extends FakeBrokerConnection {
  readonly pending: { body: string; reject(error: Error): void }[] = [];

  constructor(
    private readonly broker: MemoryBroker,
    readonly connectionUrl: string,
    private readonly onDrop: (why: string) => void,
  ) {
    super();
  }

  publish(topic: string, body: string): Promise<void> {
    if (this.broker.publishFailure) return Promise.reject(this.broker.publishFailure);
    if (this.broker.acknowledging === 'ack') {
      this.broker.acknowledged.push({ connection: this, connectionUrl: this.connectionUrl, topic, body });
      return Promise.resolve();
    }
    return new Promise<void>((_resolve, reject) => this.pending.push({ body, reject }));
  }

  /** The socket fails under the client: what it held fails, and the client reports the close. */
  break(error: Error): void {
    this.usable = false;
    for (const publish of this.pending.splice(0)) publish.reject(error);
    this.onDrop(error.message);
  }

  override destroy(): void {
    super.destroy();
    for (const publish of this.pending.splice(0)) publish.reject(new Error('connection destroyed'));
  }
}

/** The least a broker transport says: how to parse `mem://user:pass@host:port/topic`, connect and publish. */
class MemoryTransport extends PooledBrokerTransport<MemoryTarget, MemoryConnection> {
  protected readonly label = 'memory';
  protected readonly acknowledgement = 'ack from the broker';

  constructor(
    readonly broker: MemoryBroker,
    logger: TransportLogger,
    options: BrokerTransportOptions,
  ) {
    super(true, logger, options);
  }

  protected readonly parse = (url: string): MemoryTarget | string => {
    const parsed = URL.canParse(url) ? new URL(url) : null;
    if (parsed?.protocol !== 'mem:' || !parsed.pathname.slice(1)) return 'target must be mem://host:port/<topic>';
    const password = decodeURIComponent(parsed.password);
    return { host: parsed.hostname, port: Number(parsed.port), password, topic: parsed.pathname.slice(1), connectionUrl: `mem://${parsed.username}:${parsed.password}@${parsed.host}` };
  };

  protected connect(target: MemoryTarget, key: string): Promise<MemoryConnection> {
    this.broker.connects += 1;
    if (this.broker.connectFailure) return Promise.reject(this.broker.connectFailure);
    const connection: MemoryConnection = new MemoryConnection(this.broker, target.connectionUrl, (why) => this.dropped(key, connection, target, redactCredentials(why, [target.password])));
    this.broker.connections.push(connection);
    return Promise.resolve(connection);
  }

  protected publish(connection: MemoryConnection, target: MemoryTarget, delivery: OutgoingDelivery): Promise<void> {
    return connection.publish(target.topic, delivery.body);
  }
}

const delivery = (body = '{"action":"Customer_create","message":{"id":1}}'): OutgoingDelivery => ({
  eventId: 'evt_unit_1',
  body,
  contentType: 'application/json',
  signatureHeaders: { 'webhook-id': 'evt_unit_1', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,c2lnbmF0dXJl' },
});

const BROKER = `mem://app:${PASSWORD}@broker.test:5999`;
let broker: MemoryBroker;
let warnings: string[];
let transport: MemoryTransport;

function send(url: string, timeoutMs = 1000, body?: string): Promise<TransportOutcome> {
  return transport.send({ id: 'dst_unit', type: 'rabbitmq', url, auth: null }, delivery(body), timeoutMs);
}

beforeEach(() => {
  broker = new MemoryBroker();
  warnings = [];
  transport = new MemoryTransport(broker, { log: () => undefined, warn: (message) => void warnings.push(message) }, { idleMs: 60_000, connectTimeoutMs: 1000 });
});
afterEach(() => transport.close());

describe('PooledBrokerTransport: pooling', () => {
  it('reuses one connection per broker and credentials, whatever the topic', async () => {
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: true });
    expect(await send(`${BROKER}/invoices`)).toMatchObject({ ok: true });
    expect(broker.connects).toBe(1);
    expect(broker.acknowledged.map(({ topic, connection }) => [topic, connection])).toEqual([
      ['orders', broker.connections[0]],
      ['invoices', broker.connections[0]],
    ]);

    await send('mem://app:other-password@broker.test:5999/orders');
    await send(`mem://app:${PASSWORD}@other-broker.test:5999/orders`);
    expect(broker.connects).toBe(3);
    expect(new Set(broker.acknowledged.map(({ connection }) => connection)).size).toBe(3);
    expect(transport.openConnections).toBe(3);
  });

  it('fails a target it cannot parse without connecting', async () => {
    expect(await send('mem://broker.test:5999/')).toMatchObject({ ok: false, reason: 'target must be mem://host:port/<topic>' });
    expect(broker.connects).toBe(0);
  });

  it('closes its connections politely at shutdown and sends nothing after', async () => {
    await send(`${BROKER}/orders`);
    await transport.close();
    expect(broker.connections[0]).toMatchObject({ closed: true, destroyed: false });
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: false, reason: 'the worker is shutting down' });
    expect(broker.connects).toBe(1);
  });
});

describe('PooledBrokerTransport: a broker that never acknowledges', () => {
  it('times out the publish, destroys the connection with the bodies it held, and reconnects on the next send', async () => {
    broker.acknowledging = 'silent';
    const started = performance.now();
    const outcome = await send(`${BROKER}/orders`, 150);
    expect(outcome).toMatchObject({ ok: false, reason: 'time-out: no ack from the broker within 150 ms' });
    expect(performance.now() - started).toBeLessThan(1000);
    const [silent] = broker.connections;
    expect(silent.destroyed).toBe(true);
    expect(silent.pending).toEqual([]);
    expect(transport.pendingPublishes).toBe(0);
    expect(transport.openConnections).toBe(0);
    expect(warnings).toEqual(['memory: no ack from the broker from broker.test:5999 within 150 ms; connection destroyed, the next send reconnects']);

    broker.acknowledging = 'ack';
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: true });
    expect(broker.connects).toBe(2);
    expect(broker.acknowledged[0].connection).toBe(broker.connections[1]);
  });

  it('fails the other publishes waiting on the destroyed connection at once, not at their own deadline', async () => {
    broker.acknowledging = 'silent';
    const started = performance.now();
    const [patient, hasty] = await Promise.all([send(`${BROKER}/orders`, 5000), send(`${BROKER}/invoices`, 150)]);
    expect(hasty).toMatchObject({ ok: false, reason: 'time-out: no ack from the broker within 150 ms' });
    expect(patient).toMatchObject({ ok: false, reason: 'time-out: no ack from the broker (the connection was destroyed: the broker stopped acknowledging)' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(broker.connects).toBe(1);
    expect(transport.pendingPublishes).toBe(0);
  });

  it('refuses a publish past the bound of pending ones at once, holding no body for it', async () => {
    await transport.close();
    transport = new MemoryTransport(broker, { log: () => undefined, warn: () => undefined }, { idleMs: 60_000, connectTimeoutMs: 1000, maxPendingPerConnection: 2 });
    broker.acknowledging = 'silent';
    const waiting = [send(`${BROKER}/orders`, 300, 'first'), send(`${BROKER}/orders`, 300, 'second')];
    const started = performance.now();
    const refused = await send(`${BROKER}/orders`, 300, 'third');
    expect(refused).toMatchObject({ ok: false, reason: "time-out: 2 publishes already wait for the broker's ack on this connection" });
    expect(performance.now() - started).toBeLessThan(150);
    expect(broker.connections[0].pending.map(({ body }) => body)).toEqual(['first', 'second']);
    expect(transport.pendingPublishes).toBe(2);
    await Promise.all(waiting);
    expect(transport.pendingPublishes).toBe(0);
  });
});

describe('PooledBrokerTransport: connection errors', () => {
  it('fails when the connect fails, and connects again on the next send', async () => {
    broker.connectFailure = new Error('connect ECONNREFUSED 127.0.0.1:5999');
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: false, reason: 'memory: connect ECONNREFUSED 127.0.0.1:5999' });
    expect(transport.openConnections).toBe(0);
    broker.connectFailure = null;
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: true });
    expect(broker.connects).toBe(2);
  });

  it('fails a publish whose connection breaks, and replaces that connection on the next send', async () => {
    await send(`${BROKER}/orders`);
    broker.acknowledging = 'silent';
    const publishing = send(`${BROKER}/orders`, 5000);
    await new Promise((resolve) => setImmediate(resolve));
    const [broken] = broker.connections;
    broken.break(new Error('read ECONNRESET'));
    expect(await publishing).toMatchObject({ ok: false, reason: 'memory: read ECONNRESET' });
    expect(warnings).toEqual(['memory: connection to broker.test:5999 closed (read ECONNRESET); the next send reconnects']);

    broker.acknowledging = 'ack';
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: true });
    expect(broker.connects).toBe(2);
    expect(broken.closed).toBe(true);
    expect(broker.acknowledged.at(-1)?.connection).toBe(broker.connections[1]);
  });

  it('forgets an idle connection the broker closed at once', async () => {
    await send(`${BROKER}/orders`);
    broker.connections[0].break(new Error('closed by the broker'));
    expect(transport.openConnections).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(broker.connections[0].closed).toBe(true);
  });

  it('keeps the connection when the broker refuses one publish', async () => {
    broker.publishFailure = new Error('NOT_FOUND - no exchange');
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: false, reason: 'memory: NOT_FOUND - no exchange' });
    broker.publishFailure = null;
    expect(await send(`${BROKER}/orders`)).toMatchObject({ ok: true });
    expect(broker.connects).toBe(1);
  });
});

describe('PooledBrokerTransport: credentials', () => {
  it('masks the password and the connection URL in every reason, and logs neither', async () => {
    const encoded = `mem://app:p%40ss-${PASSWORD}@broker.test:5999`;
    const decoded = `p@ss-${PASSWORD}`;
    const reasons: string[] = [];
    const collect = async (outcome: Promise<TransportOutcome>): Promise<void> => {
      const settled = await outcome;
      expect(settled.ok).toBe(false);
      if (!settled.ok) reasons.push(settled.reason);
    };

    broker.connectFailure = new Error(`cannot open ${encoded}: authentication failed for app/${decoded}`);
    await collect(send(`${encoded}/orders`));
    broker.connectFailure = new Error(`refused:   ${decoded}\n  was\twrong`);
    await collect(send(`${encoded}/orders`));
    broker.connectFailure = null;
    broker.publishFailure = new Error(`channel closed: ACCESS_REFUSED for ${encoded}`);
    await collect(send(`${encoded}/orders`));
    broker.publishFailure = null;
    broker.acknowledging = 'silent';
    await collect(send(`${encoded}/orders`, 100));

    expect(reasons).toEqual([
      'memory: cannot open ***: authentication failed for app/***',
      'refused: *** was wrong',
      'memory: channel closed: ACCESS_REFUSED for ***',
      'time-out: no ack from the broker within 100 ms',
    ]);
    expect(warnings.filter((line) => line.includes(PASSWORD) || line.includes('p%40ss'))).toEqual([]);
    expect(warnings).toHaveLength(1);
  });
});
