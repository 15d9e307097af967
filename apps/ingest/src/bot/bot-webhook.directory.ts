import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Account, BotWebhook, type BotWebhookType } from '@app/persistence';

/**
 * How long a lookup (found or not) is reused. Short, because config-api deletes and creates webhooks in
 * another process and nothing tells this one: a delete takes effect within this time.
 */
export const BOT_WEBHOOK_CACHE_TTL_MS = 2000;
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
  target: BotWebhookTarget | null;
  expiresAt: number;
}

/** Finds an account's webhook by type and name, with a brief in-memory cache (bot traffic is bursty). */
@Injectable()
export class BotWebhookDirectory {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(accountId: number, type: BotWebhookType, name: string): Promise<BotWebhookTarget | null> {
    const cacheKey = JSON.stringify([accountId, type, name]);
    const now = Date.now();
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expiresAt > now) return cached.target;

    const row = await this.dataSource.getRepository(BotWebhook).findOneBy({ accountId, type, name });
    const target = row
      ? { id: row.id, accountId: row.accountId, name: row.name, type: row.type, url: row.url, key: row.key, timeoutMs: row.timeoutMs }
      : null;
    this.cache.delete(cacheKey);
    // Maps iterate in insertion order, so the first key is the oldest entry.
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(cacheKey, { target, expiresAt: now + BOT_WEBHOOK_CACHE_TTL_MS });
    return target;
  }

  /** Only asked after a miss, to tell "no such account" from "no such webhook". */
  accountExists(accountId: number): Promise<boolean> {
    return this.dataSource.getRepository(Account).exists({ where: { id: accountId } });
  }
}
