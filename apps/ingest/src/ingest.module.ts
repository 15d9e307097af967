import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { RuntimeModule } from '@app/runtime';
import { BotModule } from './bot/bot.module';
import { EventsModule } from './events/events.module';

/** Domain events in (`/v1/events`), bot calls out (`/v1/bot/*`). */
@Module({
  imports: [RuntimeModule, PersistenceModule.forRoot('ingest'), EventsModule, BotModule],
})
export class IngestModule {}
