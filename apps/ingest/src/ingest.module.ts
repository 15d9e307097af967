import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { DeliveryQueueModule, ObservabilityModule } from '@app/runtime';

/** Domain events in (`/v1/events`), bot calls out (`/v1/bot/*`). */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('ingest'), DeliveryQueueModule.register('producer')],
})
export class IngestModule {}
