import { type DynamicModule, Module } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { DeliveryProducer } from './delivery-producer.service';
import { DeliveryQueues } from './delivery-queues';

/** The sharded delivery queue with the connection settings its role needs. */
@Module({})
export class DeliveryQueueModule {
  static register(role: 'producer' | 'consumer'): DynamicModule {
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
