import { Module } from '@nestjs/common';
import { DeliveryQueueModule, TaskQueueModule } from '@app/runtime';
import { DestinationsModule } from '../../destinations/destinations.module';
import { EventRedeliveryController } from './event-redelivery.controller';
import { RedeliveriesController } from './redeliveries.controller';
import { RedeliveryTasks } from './redelivery-tasks.service';
import { RedeliveryService } from './redelivery.service';

/** Redelivery: one event, and bulk redeliveries recorded as tasks (the delivery workers run them) with their progress calls. */
@Module({
  imports: [DeliveryQueueModule.register('producer'), TaskQueueModule.register('producer'), DestinationsModule],
  controllers: [EventRedeliveryController, RedeliveriesController],
  providers: [RedeliveryService, RedeliveryTasks],
  exports: [RedeliveryService, RedeliveryTasks],
})
export class RedeliveriesModule {}
