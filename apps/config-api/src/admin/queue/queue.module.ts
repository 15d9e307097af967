import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { QueueController } from './queue.controller';

@Module({ imports: [DeliveryQueueModule.register('producer')], controllers: [QueueController] })
export class QueueModule {}
