import type { LoggerService } from '@nestjs/common';
import type { RedisClient } from '../redis/redis-connection';
import type { RedisKeys } from '../redis/redis-keys';
import { loggableError } from '../http/database-errors';

/**
 * Tells every worker that an account's callback settings changed. Workers keep settings in memory and
 * drop an account's entry when told; a lost message is covered by the cache's short time-to-live.
 * On a Redis Cluster a PUBLISH reaches subscribers on every node, so it works there unchanged.
 */
export async function publishSettingsChanged(redis: RedisClient, keys: RedisKeys, accountId: number): Promise<void> {
  await redis.publish(keys.settingsChannel(), String(accountId));
}

/**
 * For a change that is already stored: if Redis cannot take the notice, workers still pick the change
 * up when their short-lived cache entry expires, so the caller gets its answer and the miss is logged.
 */
export async function announceStoredSettingsChange(
  redis: RedisClient,
  keys: RedisKeys,
  accountId: number,
  logger: Pick<LoggerService, 'warn'>,
): Promise<void> {
  try {
    await publishSettingsChanged(redis, keys, accountId);
  } catch (error) {
    logger.warn({ ...loggableError(error), accountId }, 'could not publish settings change; workers will refresh on cache expiry');
  }
}
