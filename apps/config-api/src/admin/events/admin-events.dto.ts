import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { EVENT_ACTIONS, IsRecordId, queryInteger } from '@app/payloads';
import { EVENT_STATUSES, type EventStatus } from '@app/persistence';
import { IsTimestamp } from './timestamp';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Statuses an operator may bulk-redeliver: the final ones (pending events are already on their way). */
export const REDELIVERABLE_STATUSES = ['failed', 'filtered', 'no_endpoint', 'delivered'] as const satisfies readonly EventStatus[];

export class ListEventsQueryDto {
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @IsOptional()
  @IsIn(EVENT_ACTIONS, { message: `action must be one of ${EVENT_ACTIONS.join(', ')}` })
  action?: string;

  @IsOptional()
  @IsIn(EVENT_STATUSES, { message: `status must be one of ${EVENT_STATUSES.join(', ')}` })
  status?: EventStatus;

  /** Inclusive lower bound on created_at. */
  @IsOptional()
  @IsTimestamp()
  since?: string;

  /** Exclusive upper bound on created_at. */
  @IsOptional()
  @IsTimestamp()
  until?: string;

  @IsOptional()
  @Transform(queryInteger)
  @IsInt({ message: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}` })
  @Min(1, { message: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}` })
  limit?: number;

  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(64, { message: 'cursor must be a next_cursor value returned by this API' })
  cursor?: string;
}

export class BulkRedeliverDto {
  @IsIn(REDELIVERABLE_STATUSES, { message: `status must be one of ${REDELIVERABLE_STATUSES.join(', ')}` })
  status!: (typeof REDELIVERABLE_STATUSES)[number];

  @IsOptional()
  @IsTimestamp()
  since?: string;

  @IsOptional()
  @IsTimestamp()
  until?: string;
}

export class StatsQueryDto {
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @IsOptional()
  @IsTimestamp()
  since?: string;
}
