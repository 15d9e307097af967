import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Account, type BotWebhookType } from '@app/persistence';
import { closeRedisConnection, createRedisConnection, ENVIRONMENT, type Environment, readBotWebhooksStamp, type RedisClient, RedisKeys, SecretBox, setBounded } from '@app/runtime';

/**
 * How long a lookup is reused while the account's change stamp is unchanged. Changes made through
 * config-api take effect with the next call whatever this is; it only bounds how long a change whose
 * stamp Redis could not take goes unseen.
 */
export const BOT_WEBHOOK_CACHE_TTL_MS = 30_000;
const MAX_CACHED = 10_000;
/** A bot call never waits on Redis longer than this; past it, the lookup asks PostgreSQL. */
const STAMP_READ_TIMEOUT_MS = 200;

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
  /** The account's change stamp read before the lookup; null while the account has none. */
  stamp: string | null;
  expiresAt: number;
}

interface WebhookRow {
  id: number;
  url: string;
  key: string;
  timeout_ms: number;
}

/**
 * Finds an account's webhook by type and name. Bot traffic is bursty and latency-bound, so lookups
 * are cached in memory, each under the account's change stamp in Redis (config-api replaces the stamp
 * after every committed create or delete). A call reads the stamp (one GET) and uses its cached lookup
 * only if the stamp is the same, so a call that starts after config-api answered sees the change, in
 * every ingest process. The stamp is read before PostgreSQL, so a lookup racing a change is cached
 * under the old stamp and not reused. When Redis cannot be read, nothing is served from or put in the
 * cache.
 */
@Injectable()
export class BotWebhookDirectory implements OnApplicationShutdown {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly redis: RedisClient;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) environment: Environment,
    private readonly secrets: SecretBox,
    private readonly keys: RedisKeys,
  ) {
    this.redis = createRedisConnection(environment, 'command', 'ingest-bot-webhooks', { commandTimeout: STAMP_READ_TIMEOUT_MS });
    // Without a listener ioredis reports every reconnect failure as an unhandled error event.
    this.redis.on('error', () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisConnection(this.redis);
  }

  async find(accountId: number, type: BotWebhookType, name: string): Promise<BotWebhookTarget | null> {
    const cacheKey = `${accountId}\u0000${type}\u0000${name}`;
    const stamp = await this.readStamp(accountId);
    const cached = this.cache.get(cacheKey);
    if (stamp !== undefined && cached && cached.stamp === stamp && cached.expiresAt > Date.now()) return cached.target;

    const target = await this.lookup(accountId, type, name);
    this.cache.delete(cacheKey);
    if (stamp !== undefined) {
      setBounded(this.cache, cacheKey, { target, stamp, expiresAt: Date.now() + BOT_WEBHOOK_CACHE_TTL_MS }, MAX_CACHED);
    }
    return target;
  }

  /** Only asked after a miss, to tell "no such account" from "no such webhook". */
  accountExists(accountId: number): Promise<boolean> {
    return this.dataSource.getRepository(Account).exists({ where: { id: accountId } });
  }

  /** One probe of the (account_id, type, name) unique index. */
  private async lookup(accountId: number, type: BotWebhookType, name: string): Promise<BotWebhookTarget | null> {
    const rows: WebhookRow[] = await this.dataSource.query(
      'SELECT id, url, key, timeout_ms FROM bot_webhooks WHERE account_id = $1 AND type = $2 AND name = $3',
      [accountId, type, name],
    );
    const row = rows[0];
    return row ? { id: row.id, accountId, name, type, url: row.url, key: this.secrets.open(row.key), timeoutMs: row.timeout_ms } : null;
  }

  /** undefined: Redis cannot say now (down, or slower than STAMP_READ_TIMEOUT_MS, the connection's command timeout). */
  private readStamp(accountId: number): Promise<string | null | undefined> {
    if (this.redis.status !== 'ready') return Promise.resolve(undefined);
    return readBotWebhooksStamp(this.redis, this.keys, accountId).catch(() => undefined);
  }
}
