import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { ObservabilityModule } from '@app/runtime';
import { BotModule } from './bot/bot.module';
import { EventsModule } from './events/events.module';

/** Domain events in (`/v1/events`), bot calls out (`/v1/bot/*`). */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('ingest'), EventsModule, BotModule],
})
export class IngestModule {}
