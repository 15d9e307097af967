import { IsIn, IsOptional } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FINAL_EVENT_STATUSES } from '@app/persistence';
import { eventFilterFields } from '../events/admin-events.dto';
import { PageLimit } from '../page-query.decorators';
import { TIMESTAMP_TEXT, TimestampFilter } from '../timestamp';

/** Statuses an operator may bulk-redeliver: the final ones (pending events are already on their way). */
export const REDELIVERABLE_STATUSES = FINAL_EVENT_STATUSES;

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

export class BulkRedeliverDto {
  @ApiProperty({ enum: REDELIVERABLE_STATUSES, example: 'failed' })
  @IsIn(REDELIVERABLE_STATUSES, { message: `status must be one of ${REDELIVERABLE_STATUSES.join(', ')}` })
  status!: (typeof REDELIVERABLE_STATUSES)[number];

  @TimestampFilter({ description: TIMESTAMP_TEXT })
  since?: string;

  @TimestampFilter({ description: TIMESTAMP_TEXT })
  until?: string;
}
