import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { DeliveryQueueModule, ObservabilityModule } from '@app/runtime';
import { BotModule } from './bot/bot.module';
import { EventsModule } from './events/events.module';

/** Domain events in (`/v1/events`), bot calls out (`/v1/bot/*`). */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('ingest'), DeliveryQueueModule.register('producer'), EventsModule, BotModule],
})
export class IngestModule {}
