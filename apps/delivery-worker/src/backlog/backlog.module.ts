import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { BacklogMetrics } from './backlog.metrics';

/** The backlog gauges the worker's autoscaler and alerts read (GET /metrics). */
@Module({ imports: [DeliveryQueueModule.register('consumer')], providers: [BacklogMetrics] })
export class BacklogModule {}
