import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Type } from '@nestjs/common';
import { type RunningApp, useApps } from './apps';

/** A loopback port that accepts connections and never answers: a broker that hangs. */
export class HangingPort {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A loopback relay to a real broker whose open connections can be reset while it keeps listening, or
 * silenced: the broker's answers on them stop reaching the client (a broker that takes publishes and
 * never acknowledges them), while the client's bytes still go through.
 */
export class ResettableRelay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  port = 0;
  accepted = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      this.accepted += 1;
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      const pair = { client, upstream };
      this.pairs.add(pair);
      client.on('close', () => {
        this.pairs.delete(pair);
        upstream.destroy();
      });
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Client connections open through the relay now (a client that destroyed its socket is gone). */
  get openClients(): number {
    return this.pairs.size;
  }

  /** The broker's bytes on the connections open now stop reaching their clients; new connections are not affected. */
  silence(): void {
    for (const { client, upstream } of this.pairs) {
      upstream.unpipe(client);
      upstream.on('data', () => undefined);
    }
  }

  /** Every relayed connection is reset, as a broker restart would; new connections still get through. */
  resetConnections(): void {
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
  }

  async stop(): Promise<void> {
    this.resetConnections();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * For the calling describe block: `rootModule` started with `overrides` against a Redis that accepts
 * the connection and never answers, so whatever waited for Redis would never answer at all, however fast
 * or slow the machine. The app is there from the first test on.
 */
export function useAppOnHangingRedis(rootModule: Type<unknown>, overrides: Record<string, string>): RunningApp {
  const hangingRedis = new HangingPort();
  beforeAll(async () => {
    await hangingRedis.start();
  });
  const { offline } = useApps({ offline: rootModule }, { overrides: () => ({ ...overrides, REDIS_URL: `redis://127.0.0.1:${hangingRedis.port}` }) });
  afterAll(async () => {
    await hangingRedis.stop();
  });
  return offline;
}
