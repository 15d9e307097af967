import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '@app/runtime';
import { ListRedeliveriesQueryDto } from './redelivery-task.dto';
import { type RedeliveryTaskView, RedeliveryTasks } from './redelivery-tasks.service';

@Controller('admin/v1/redeliveries')
@UseGuards(AdminTokenGuard)
export class RedeliveriesController {
  constructor(private readonly tasks: RedeliveryTasks) {}

  @Get()
  list(@Query() query: ListRedeliveriesQueryDto): Promise<{ items: RedeliveryTaskView[] }> {
    return this.tasks.list(query.limit ?? 50);
  }

  @Get(':task_id')
  get(@Param('task_id') taskId: string): Promise<RedeliveryTaskView> {
    return this.tasks.get(taskId);
  }
}
