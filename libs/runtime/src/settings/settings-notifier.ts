import type { RedisClient } from '../redis/redis-connection';
import { RedisKeys } from '../redis/redis-keys';

/**
 * Tells every worker that an account's callback settings changed. Workers keep settings in memory and
 * drop an account's entry when told; a lost message is covered by the cache's short time-to-live.
 * On a Redis Cluster a PUBLISH reaches subscribers on every node, so it works there unchanged.
 */
export async function publishSettingsChanged(redis: RedisClient, prefix: string, accountId: number): Promise<void> {
  await redis.publish(new RedisKeys(prefix).settingsChannel(), String(accountId));
}
