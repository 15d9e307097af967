import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connection';
import type { RedisKeys } from './redis-keys';

/**
 * A stamp outlives every cache entry by far: if it expired while an entry made before the change
 * (with no stamp) were still cached, that entry would match again.
 */
const STAMP_TTL_SECONDS = 86_400;

/**
 * Marks an account's bot webhooks as changed, after the change is committed. Ingest processes compare
 * the stamp with the one their cached lookups were made under, so every call that starts after this
 * resolves sees the change. Random, not a counter: a Redis that lost its data cannot hand out a value
 * some cached entry still carries.
 */
export async function stampBotWebhooksChanged(redis: Pick<RedisClient, 'set'>, keys: RedisKeys, accountId: number): Promise<void> {
  await redis.set(keys.botWebhooksStamp(accountId), randomUUID(), 'EX', STAMP_TTL_SECONDS);
}

/** The account's current stamp; null until its webhooks first change (or after the stamp expired). */
export function readBotWebhooksStamp(redis: Pick<RedisClient, 'get'>, keys: RedisKeys, accountId: number): Promise<string | null> {
  return redis.get(keys.botWebhooksStamp(accountId));
}
