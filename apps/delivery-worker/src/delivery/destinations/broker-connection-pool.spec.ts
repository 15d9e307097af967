import { createSocket } from 'node:dgram';
import { configureDns, DEFAULT_DNS_TIMEOUT_MS } from '@app/runtime';
import { BrokerConnectionPool, brokerAddress } from './broker-connection-pool';
import { FakeBrokerConnection } from '../../../test/broker-connection.fakes';


describe('BrokerConnectionPool', () => {
  let pool: BrokerConnectionPool<FakeBrokerConnection>;
  afterEach(() => pool.closeAll());

  it('shares one connect between concurrent sends of one key', async () => {
    pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 1000 });
    let connects = 0;
    const connect = async () => {
      connects += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return new FakeBrokerConnection();
    };
    const used = await Promise.all(Array.from({ length: 5 }, () => pool.use('k', connect, 1000, (connection) => Promise.resolve(connection))));
    expect(connects).toBe(1);
    expect(new Set(used).size).toBe(1);
  });

  it('destroys a silent connection at once, even while another send uses it, and connects anew', async () => {
    pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 1000 });
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let first: FakeBrokerConnection | null = null;
    const using = pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, async (connection) => {
      first = connection;
      await held;
    });
    await new Promise((resolve) => setImmediate(resolve));
    const silent = first as unknown as FakeBrokerConnection;
    pool.destroy('k', silent);
    expect(silent.destroyed).toBe(true);
    expect(pool.size).toBe(0);
    const next = await pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, (connection) => Promise.resolve(connection));
    expect(next).not.toBe(silent);
    release();
    await using;
  });

  it('closes a connection left unused for the idle time, and connects anew afterwards', async () => {
    jest.useFakeTimers();
    try {
      pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 1000 });
      const first = await pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, (connection) => Promise.resolve(connection));
      jest.advanceTimersByTime(59_000);
      expect(first.closed).toBe(false);
      jest.advanceTimersByTime(1_000);
      await Promise.resolve();
      expect(first.closed).toBe(true);
      expect(pool.size).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('replaces a connection found unusable', async () => {
    pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 1000 });
    const first = await pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, (connection) => Promise.resolve(connection));
    first.usable = false;
    const second = await pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, (connection) => Promise.resolve(connection));
    expect(second).not.toBe(first);
    expect(first.closed).toBe(true);
  });

  it('gives up connecting after the bound and closes the late connection', async () => {
    pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 20 });
    let late: FakeBrokerConnection | undefined;
    let finish: () => void = () => undefined;
    const connect = () =>
      new Promise<FakeBrokerConnection>((resolve) => {
        finish = () => resolve((late = new FakeBrokerConnection()));
      });
    await expect(pool.use('k', connect, 1000, () => Promise.resolve())).rejects.toThrow('time-out: no connection to the broker within 20 ms');
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(late?.closed).toBe(true);
    expect(pool.size).toBe(0);
  });

  it('refuses new sends once closed', async () => {
    pool = new BrokerConnectionPool({ idleMs: 60_000, connectTimeoutMs: 20 });
    const connection = await pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, (opened) => Promise.resolve(opened));
    await pool.closeAll();
    expect(connection.closed).toBe(true);
    await expect(pool.use('k', () => Promise.resolve(new FakeBrokerConnection()), 1000, () => Promise.resolve())).rejects.toThrow('shutting down');
  });
});

describe('brokerAddress', () => {
  it('refuses loopback and private literals and names unless private targets are allowed', async () => {
    await expect(brokerAddress('127.0.0.1', false)).rejects.toThrow('refused: broker host 127.0.0.1 points to a non-public address or does not resolve');
    await expect(brokerAddress('10.1.2.3', false)).rejects.toThrow('refused');
    await expect(brokerAddress('[::1]', false)).rejects.toThrow('refused');
    await expect(brokerAddress('localhost', false)).rejects.toThrow('refused: broker host localhost');
    await expect(brokerAddress('127.0.0.1', true)).resolves.toBe('127.0.0.1');
    await expect(brokerAddress('93.184.216.34', false)).resolves.toBe('93.184.216.34');
  });

  it('gives up on a broker name whose DNS never answers at DNS_TIMEOUT_MS, private targets allowed or not', async () => {
    // A DNS server on loopback that takes every question and never answers.
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    configureDns({ servers: [`127.0.0.1:${(silent.address()).port}`], timeoutMs: 300 });
    try {
      for (const allowPrivateTargets of [true, false]) {
        const started = Date.now();
        await expect(brokerAddress('broker.slow-dns.example', allowPrivateTargets)).rejects.toThrow('time-out: broker host broker.slow-dns.example did not resolve within 300 ms');
        expect(Date.now() - started).toBeLessThan(1500);
      }
    } finally {
      configureDns({ servers: null, timeoutMs: DEFAULT_DNS_TIMEOUT_MS });
      silent.close();
    }
  });
});
