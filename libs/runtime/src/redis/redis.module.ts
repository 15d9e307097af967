import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { RedisOptions } from 'ioredis';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { closeRedisConnection, createRedisConnection, type RedisClient, waitForReady } from './redis-connection';

export const REDIS = Symbol('REDIS');

/**
 * Options for command connections: fail fast instead of queueing while Redis is away, so callers
 * can answer (or fall back) at once rather than hang.
 */
export function commandConnectionOptions(): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  };
}

/** Blocking connections used by BullMQ workers must retry forever (BullMQ requires maxRetriesPerRequest null). */
export function workerConnectionOptions(): RedisOptions {
  return { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 200, 2000) };
}

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}
  async onApplicationShutdown(): Promise<void> {
    await closeRedisConnection(this.redis);
  }
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ENVIRONMENT],
      useFactory: async (environment: Environment): Promise<RedisClient> => {
        const client = createRedisConnection(environment, 'command', 'commands');
        // Without a listener ioredis reports every reconnect failure as an unhandled error event.
        client.on('error', () => undefined);
        await waitForReady(client, 3000);
        return client;
      },
    },
    RedisLifecycle,
  ],
  exports: [REDIS],
})
export class RedisModule {}
