import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ListRedeliveriesQueryDto } from './redelivery-task.dto';
import type { RedeliveryTaskView } from '@app/payloads';
import { RedeliveryTasks } from './redelivery-tasks.service';
import { ApiListRedeliveries, ApiRedeliveryTask } from './redeliveries.docs';
import { ApiAdminController } from '../admin.docs';

@ApiAdminController('Admin: redelivery tasks')
@Controller('admin/v1/redeliveries')
@UseGuards(AdminAccessGuard)
export class RedeliveriesController {
  constructor(private readonly tasks: RedeliveryTasks) {}

  @ApiListRedeliveries()
  @Permission('read')
  @Get()
  list(@Query() query: ListRedeliveriesQueryDto): Promise<{ items: RedeliveryTaskView[] }> {
    return this.tasks.list(query.limit ?? 50);
  }

  @ApiRedeliveryTask()
  @Permission('read')
  @Get(':task_id')
  get(@Param('task_id') taskId: string): Promise<RedeliveryTaskView> {
    return this.tasks.get(taskId);
  }
}
