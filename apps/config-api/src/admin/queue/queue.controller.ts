import { Controller, Get, type OnModuleInit, UseGuards } from '@nestjs/common';
import { AdminTokenGuard, DeliveryQueues, queueDepth, type QueueDepth, registerQueueDepthGauges } from '@app/runtime';

/** `GET /admin/v1/queue`: depth of the delivery queue by state, over every shard; also served as gauges on /metrics. */
@Controller('admin/v1/queue')
@UseGuards(AdminTokenGuard)
export class QueueController implements OnModuleInit {
  constructor(private readonly queues: DeliveryQueues) {}

  onModuleInit(): void {
    registerQueueDepthGauges(() => queueDepth(this.queues.all()));
  }

  @Get()
  depth(): Promise<QueueDepth> {
    return queueDepth(this.queues.all());
  }
}
