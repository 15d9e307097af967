import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Environment } from '../config/environment';
import { loggableErrorText } from '../http/database-errors';
import { createRedisConnection, type RedisClient } from '../redis/redis-connection';

export interface ChangeListener {
  /** One account's entries changed. */
  onAccount(accountId: number): void;
  /**
   * Drop everything: the subscription (re)connected, so notifications may have been missed meanwhile,
   * or a notification named no single account.
   */
  onResync(): void;
}

/** How long closing waits for Redis to acknowledge QUIT before dropping the connection. */
const QUIT_TIMEOUT_MS = 1000;

/**
 * Listens on one change channel (the account settings) for a process-local cache. A subscribed
 * connection cannot run commands, hence its own; it retries forever and resubscribes by itself. While
 * it is not `listening`, a cache must not serve from memory: notifications are being missed.
 */
export class ChangeSubscription {
  private readonly logger = new Logger(ChangeSubscription.name);
  private client: RedisClient | null = null;

  constructor(
    private readonly environment: Pick<Environment, 'redis' | 'redisTopology'>,
    private readonly channel: string,
    private readonly connectionName: string,
    private readonly listener: ChangeListener,
  ) {}

  start(): void {
    if (this.client) return;
    const client = createRedisConnection(this.environment, 'subscriber', this.connectionName);
    client.on('error', (error: Error) => this.logger.debug(`${this.channel}: ${loggableErrorText(error)}`));
    client.on('ready', () => this.listener.onResync());
    client.on('message', (received: string, message: string) => {
      if (received !== this.channel) return;
      const accountId = Number(message);
      if (Number.isInteger(accountId)) this.listener.onAccount(accountId);
      else this.listener.onResync();
    });
    client.subscribe(this.channel).catch((error: Error) => this.logger.warn(`cannot subscribe to ${this.channel}: ${loggableErrorText(error)}`));
    this.client = client;
  }

  get listening(): boolean {
    return this.client?.status === 'ready';
  }

  /**
   * Never waits on Redis for long: QUIT on a connection that is not up would sit in the offline queue
   * until Redis returns, holding up the process's shutdown.
   */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client || client.status === 'end') return;
    if (client.status !== 'ready') {
      client.disconnect();
      return;
    }
    const timer = setTimeout(() => client.disconnect(), QUIT_TIMEOUT_MS);
    try {
      await client.quit();
    } catch {
      client.disconnect();
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A process-local cache that follows one change channel for as long as its module runs: an account's
 * notice drops that account's entries (`invalidate`), a (re)connect or a notice naming no account drops
 * everything (`invalidateAll`). While `subscription.listening` is false it must not serve from memory.
 */
export abstract class ChangeFollowingCache implements OnModuleInit, OnApplicationShutdown {
  protected readonly subscription: ChangeSubscription;

  protected constructor(environment: Pick<Environment, 'redis' | 'redisTopology'>, channel: string, connectionName: string) {
    this.subscription = new ChangeSubscription(environment, channel, connectionName, {
      onAccount: (accountId) => this.invalidate(accountId),
      onResync: () => this.invalidateAll(),
    });
  }

  abstract invalidate(accountId: number): void;

  abstract invalidateAll(): void;

  onModuleInit(): void {
    this.subscription.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription.close();
  }
}
