import { type DynamicModule, Module } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { DeliveryProducer } from './delivery-producer.service';
import { DeliveryQueues } from './delivery-queues';

/**
 * The sharded delivery queue with the connection settings its role needs. One module object per role:
 * Nest tells dynamic modules apart by reference, so every module of an app that registers a role shares
 * one DeliveryQueues (one connection) rather than opening its own.
 */
@Module({})
export class DeliveryQueueModule {
  private static readonly registered = new Map<'producer' | 'consumer', DynamicModule>();

  static register(role: 'producer' | 'consumer'): DynamicModule {
    let registered = DeliveryQueueModule.registered.get(role);
    if (!registered) {
      registered = DeliveryQueueModule.build(role);
      DeliveryQueueModule.registered.set(role, registered);
    }
    return registered;
  }

  private static build(role: 'producer' | 'consumer'): DynamicModule {
    return {
      module: DeliveryQueueModule,
      providers: [
        {
          provide: DeliveryQueues,
          inject: [ENVIRONMENT],
          useFactory: async (environment: Environment): Promise<DeliveryQueues> => {
            const queues = DeliveryQueues.open(environment, role);
            await queues.ready(3000);
            return queues;
          },
        },
        ...(role === 'producer' ? [DeliveryProducer] : []),
      ],
      exports: role === 'producer' ? [DeliveryQueues, DeliveryProducer] : [DeliveryQueues],
    };
  }
}
