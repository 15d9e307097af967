import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Module } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { commandConnectionOptions, workerConnectionOptions } from '../redis/redis.module';
import { DELIVERY_QUEUE } from './delivery-queue';
import { DeliveryProducer } from './delivery-producer.service';

function connectionFor(environment: Environment, role: 'producer' | 'consumer') {
  const url = new URL(environment.redis.url);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    // Producers fail fast (the event is already stored, the reconciler enqueues it later);
    // consumers must ride out Redis restarts.
    ...(role === 'producer' ? commandConnectionOptions() : workerConnectionOptions()),
  };
}

/** The delivery queue with the connection settings its role needs. */
@Module({})
export class DeliveryQueueModule {
  static register(role: 'producer' | 'consumer'): DynamicModule {
    return {
      module: DeliveryQueueModule,
      imports: [
        BullModule.forRootAsync({
          inject: [ENVIRONMENT],
          useFactory: (environment: Environment) => ({
            connection: connectionFor(environment, role),
            prefix: `${environment.redis.prefix}:bull`,
          }),
        }),
        BullModule.registerQueue({ name: DELIVERY_QUEUE }),
      ],
      providers: role === 'producer' ? [DeliveryProducer] : [],
      exports: role === 'producer' ? [BullModule, DeliveryProducer] : [BullModule],
    };
  }
}
