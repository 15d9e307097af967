import { Controller, Get, type OnModuleInit, UseGuards } from '@nestjs/common';
import type { QueueState } from '@app/payloads';
import { DeliveryQueues } from '@app/runtime';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { queueDepth, registerQueueDepthGauges } from '@app/runtime';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ApiAdminController, ApiAdminOperation } from '../admin.docs';
import { QueueDepthModel } from './queue.docs';

/** `GET /admin/v1/queue`: depth of the delivery queue by state, over every shard; also served as gauges on /metrics. */
@ApiAdminController('Admin: queue and endpoints')
@Controller('admin/v1/queue')
@UseGuards(AdminAccessGuard)
export class QueueController implements OnModuleInit {
  constructor(private readonly queues: DeliveryQueues) {}

  onModuleInit(): void {
    registerQueueDepthGauges(() => queueDepth(this.queues.all()));
  }

  @ApiAdminOperation('Delivery queue depth and the oldest waiting job', 200, QueueDepthModel, 'Summed over every shard; also exported as gauges on /metrics.')
  @ApiErrorResponses([503, 'Redis is unavailable.'])
  @Permission('read')
  @Get()
  depth(): Promise<QueueState> {
    return queueDepth(this.queues.all());
  }
}
