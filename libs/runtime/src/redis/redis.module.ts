import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';

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

/** Waits until a connection is ready or the time runs out; start-up continues either way and readiness reports the truth. */
export async function waitForReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    // quit() on a connection that already ended never settles its handle; there is nothing to close then.
    if (this.redis.status === 'end') return;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ENVIRONMENT],
      useFactory: async (environment: Environment): Promise<Redis> => {
        const client = new Redis(environment.redis.url, commandConnectionOptions());
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
