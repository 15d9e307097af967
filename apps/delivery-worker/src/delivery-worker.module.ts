import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { DeliveryQueueModule, ObservabilityModule } from '@app/runtime';
import { DeliveryModule } from './delivery/delivery.module';

/** The only consumer of the delivery queue; serves nothing but health and metrics. */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('delivery-worker'), DeliveryQueueModule.register('consumer'), DeliveryModule],
})
export class DeliveryWorkerModule {}
