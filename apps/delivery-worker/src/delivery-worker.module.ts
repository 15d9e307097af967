import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { DeliveryQueueModule, ObservabilityModule } from '@app/runtime';

/** The only consumer of the delivery queue; serves nothing but health and metrics. */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('delivery-worker'), DeliveryQueueModule.register('consumer')],
})
export class DeliveryWorkerModule {}
