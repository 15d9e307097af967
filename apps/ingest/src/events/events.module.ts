import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationDirectory } from './destination-directory';
import { EventStore } from './event-store.service';
import { EventsController } from './events.controller';
import { EventsFastPath } from './events-fast-path.service';
import { EventsService } from './events.service';
import { GroupCommitService } from './group-commit.service';

/**
 * POST /v1/events and /v1/events/batch: validate, store durably in PostgreSQL, then enqueue.
 * The module registers the producer side of the delivery queue itself, so it needs nothing from its app.
 */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  controllers: [EventsController],
  providers: [EventsService, EventStore, DestinationDirectory, GroupCommitService, EventsFastPath],
})
export class EventsModule {}
