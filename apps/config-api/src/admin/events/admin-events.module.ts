import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { AdminEventsController } from './admin-events.controller';
import { AdminEventsService } from './admin-events.service';
import { RedeliveryService } from './redelivery.service';

/**
 * Operators' view of events: list, detail with attempts, redelivery (one event or an account's
 * events in a status) and stats. Redelivery only enqueues; the queue connection comes from
 * the producer side of DeliveryQueueModule, registered here so the module needs nothing from its app.
 */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  controllers: [AdminEventsController],
  providers: [AdminEventsService, RedeliveryService],
})
export class AdminEventsModule {}
