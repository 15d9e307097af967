import type Redis from 'ioredis';
import { RedisKeys } from '../redis/redis-keys';

/**
 * Tells every worker that an account's callback settings changed. Workers keep settings in memory and
 * drop an account's entry when told; a lost message is covered by the cache's short time-to-live.
 */
export async function publishSettingsChanged(redis: Redis, prefix: string, accountId: number): Promise<void> {
  await redis.publish(new RedisKeys(prefix).settingsChannel(), String(accountId));
}
