import { type DynamicModule, Module } from '@nestjs/common';
import { DeliveryProducer } from './delivery-producer.service';
import { DeliveryQueues } from './delivery-queues';
import { onePerRole, queueProvider } from './queue-modules';

/** The sharded delivery queue with the connection settings its role needs, one module object per role. */
@Module({})
export class DeliveryQueueModule {
  static readonly register = onePerRole(
    (role: 'producer' | 'consumer'): DynamicModule => ({
      module: DeliveryQueueModule,
      providers: [queueProvider(DeliveryQueues, (environment) => DeliveryQueues.open(environment, role)), ...(role === 'producer' ? [DeliveryProducer] : [])],
      exports: role === 'producer' ? [DeliveryQueues, DeliveryProducer] : [DeliveryQueues],
    }),
  );
}
