import { IsIn, IsOptional } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { eventFilterFields, REDELIVERABLE_STATUSES } from '../events/admin-events.dto';
import { PageLimit } from '../page-query.decorators';

/** `POST /admin/v1/events/redeliver`: the event list's filters in the body; status defaults to failed. */
export class FilterRedeliverDto extends eventFilterFields('body') {
  @ApiPropertyOptional({ enum: REDELIVERABLE_STATUSES, default: 'failed' })
  @IsOptional()
  @IsIn(REDELIVERABLE_STATUSES, { message: `status must be one of ${REDELIVERABLE_STATUSES.join(', ')}` })
  status?: (typeof REDELIVERABLE_STATUSES)[number];
}

export const MAX_TASK_PAGE = 200;

export class ListRedeliveriesQueryDto {
  @PageLimit(MAX_TASK_PAGE, 50)
  limit?: number;
}
