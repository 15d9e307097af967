import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { RedeliveryService } from '../events/redelivery.service';
import { RedeliveriesController } from './redeliveries.controller';
import { RedeliveryRunner } from './redelivery-runner.service';
import { RedeliveryTasks } from './redelivery-tasks.service';

/** Redelivery (one event, and bulk redeliveries as resumable background tasks) and its progress calls. */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  controllers: [RedeliveriesController],
  providers: [RedeliveryService, RedeliveryTasks, RedeliveryRunner],
  exports: [RedeliveryService, RedeliveryTasks],
})
export class RedeliveriesModule {}
