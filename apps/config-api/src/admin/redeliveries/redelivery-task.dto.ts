import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { queryInteger } from '@app/payloads';
import { eventFilterFields, REDELIVERABLE_STATUSES } from '../events/admin-events.dto';

/** `POST /admin/v1/events/redeliver`: the event list's filters in the body; status defaults to failed. */
export class FilterRedeliverDto extends eventFilterFields('body') {
  @ApiPropertyOptional({ enum: REDELIVERABLE_STATUSES, default: 'failed' })
  @IsOptional()
  @IsIn(REDELIVERABLE_STATUSES, { message: `status must be one of ${REDELIVERABLE_STATUSES.join(', ')}` })
  status?: (typeof REDELIVERABLE_STATUSES)[number];
}

export const MAX_TASK_PAGE = 200;

export class ListRedeliveriesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_TASK_PAGE, default: 50 })
  @IsOptional()
  @Transform(queryInteger)
  @IsInt({ message: `limit must be an integer from 1 to ${MAX_TASK_PAGE}` })
  @Min(1, { message: `limit must be an integer from 1 to ${MAX_TASK_PAGE}` })
  @Max(MAX_TASK_PAGE, { message: `limit must be an integer from 1 to ${MAX_TASK_PAGE}` })
  limit?: number;
}
