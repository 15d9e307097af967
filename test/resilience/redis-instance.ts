import Redis from 'ioredis';
import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from '@app/testing';
import { freePort } from './app-process';
import { cleanup } from './cleanup-stack';

/**
 * A `redis-server` of the drill's own on a loopback port, persisting nothing, so stopping it and starting
 * a new one on the same port is exactly "Redis restarted empty".
 */
export class RedisInstance {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private unregister: () => void = () => undefined;

  private constructor(readonly port: number) {}

  static async create(): Promise<RedisInstance> {
    const instance = new RedisInstance(await freePort());
    await instance.start();
    return instance;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('redis-server is already running');
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'],
      { stdio: 'ignore' },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.unregister = cleanup.add(
      `redis-server :${this.port}`,
      () => this.stop(),
      () => child.kill('SIGKILL'),
    );
    await waitFor(`redis-server on port ${this.port}`, () => this.ping(), { timeoutMs: 10_000, intervalMs: 50 });
  }

  /** SIGKILL: nothing is saved, the next server on this port starts empty. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
    this.child = undefined;
    this.unregister();
  }

  /** Number of keys held (0 right after a restart). */
  async keyCount(): Promise<number> {
    const client = this.client();
    try {
      return await client.dbsize();
    } finally {
      client.disconnect();
    }
  }

  private async ping(): Promise<boolean> {
    const client = this.client();
    try {
      return (await client.ping()) === 'PONG';
    } finally {
      client.disconnect();
    }
  }

  private client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
    // The failed command already reports a refused connection; the event would only be printed.
    client.on('error', () => undefined);
    return client;
  }
}
