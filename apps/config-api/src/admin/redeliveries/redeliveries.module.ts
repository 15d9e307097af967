import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationsModule } from '../../destinations/destinations.module';
import { EventRedeliveryController } from './event-redelivery.controller';
import { RedeliveriesController } from './redeliveries.controller';
import { RedeliveryRunner } from './redelivery-runner.service';
import { RedeliveryTasks } from './redelivery-tasks.service';
import { RedeliveryService } from './redelivery.service';

/** Redelivery: one event, and bulk redeliveries as resumable background tasks with their progress calls. */
@Module({
  imports: [DeliveryQueueModule.register('producer'), DestinationsModule],
  controllers: [EventRedeliveryController, RedeliveriesController],
  providers: [RedeliveryService, RedeliveryTasks, RedeliveryRunner],
  exports: [RedeliveryService, RedeliveryTasks],
})
export class RedeliveriesModule {}
