import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { closeRedisConnection, createRedisConnection, type RedisClient, waitForReady } from './redis-connection';
import { RedisKeys } from './redis-keys';

/**
 * The shared command connection (fails fast while Redis is away). On a cluster it is an ioredis
 * Cluster; its commands are the same, so users keep typing it as Redis.
 */
export const REDIS = Symbol('REDIS');

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
    // Injected by its class: every key is taken from this one instance, built from REDIS_PREFIX.
    { provide: RedisKeys, inject: [ENVIRONMENT], useFactory: (environment: Environment): RedisKeys => RedisKeys.of(environment) },
    RedisLifecycle,
  ],
  exports: [REDIS, RedisKeys],
})
export class RedisModule {}
