import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Account, BotWebhook, type BotWebhookType } from '@app/persistence';
import { ChangeSubscription, ENVIRONMENT, type Environment, RedisKeys } from '@app/runtime';

/**
 * How long a lookup (found or not) is reused. Changes arrive through the bot-webhooks channel at once;
 * this only bounds how long a lost notification could leave a stale entry.
 */
export const BOT_WEBHOOK_CACHE_TTL_MS = 30_000;
const MAX_CACHED = 10_000;

export interface BotWebhookTarget {
  id: number;
  accountId: number;
  name: string;
  type: BotWebhookType;
  url: string;
  key: string;
  timeoutMs: number;
}

interface CacheEntry {
  accountId: number;
  target: BotWebhookTarget | null;
  expiresAt: number;
}

/**
 * Finds an account's webhook by type and name, with an in-memory cache (bot traffic is bursty) kept
 * fresh by the bot-webhooks channel: config-api announces every created or deleted webhook, a message
 * drops that account's entries, a (re)connect drops everything (messages may have been missed), and
 * while the subscription is down every lookup goes to the database.
 */
@Injectable()
export class BotWebhookDirectory implements OnModuleInit, OnApplicationShutdown {
  private readonly cache = new Map<string, CacheEntry>();
  /** Bumped by every invalidation, so a lookup that raced one is not cached. */
  private generation = 0;
  private readonly subscription: ChangeSubscription;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    this.subscription = new ChangeSubscription(environment, new RedisKeys(environment.redis.prefix).botWebhooksChannel(), 'ingest-bot-webhooks', {
      onAccount: (accountId) => this.invalidate(accountId),
      onResync: () => this.invalidateAll(),
    });
  }

  onModuleInit(): void {
    this.subscription.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription.close();
  }

  async find(accountId: number, type: BotWebhookType, name: string): Promise<BotWebhookTarget | null> {
    const cacheKey = JSON.stringify([accountId, type, name]);
    const listening = this.subscription.listening;
    const cached = this.cache.get(cacheKey);
    if (listening && cached && cached.expiresAt > Date.now()) return cached.target;

    const generation = this.generation;
    const row = await this.dataSource.getRepository(BotWebhook).findOneBy({ accountId, type, name });
    const target = row
      ? { id: row.id, accountId: row.accountId, name: row.name, type: row.type, url: row.url, key: row.key, timeoutMs: row.timeoutMs }
      : null;
    this.cache.delete(cacheKey);
    if (listening && generation === this.generation) {
      // Maps iterate in insertion order, so the first key is the oldest entry.
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(cacheKey, { accountId, target, expiresAt: Date.now() + BOT_WEBHOOK_CACHE_TTL_MS });
    }
    return target;
  }

  /** Only asked after a miss, to tell "no such account" from "no such webhook". */
  accountExists(accountId: number): Promise<boolean> {
    return this.dataSource.getRepository(Account).exists({ where: { id: accountId } });
  }

  /** Changes are rare; a scan of at most MAX_CACHED entries is cheaper than keeping a second index. */
  invalidate(accountId: number): void {
    this.generation += 1;
    for (const [key, entry] of this.cache) if (entry.accountId === accountId) this.cache.delete(key);
  }

  invalidateAll(): void {
    this.generation += 1;
    this.cache.clear();
  }
}
