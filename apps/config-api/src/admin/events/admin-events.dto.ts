import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { EVENT_ACTIONS, IsRecordId, queryInteger } from '@app/payloads';
import { EVENT_STATUSES, type EventStatus } from '@app/persistence';
import { IsMessageSearch } from './message-search.decorator';
import { IsTimestamp } from './timestamp';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Statuses an operator may bulk-redeliver: the final ones (pending events are already on their way). */
export const REDELIVERABLE_STATUSES = ['failed', 'filtered', 'no_endpoint', 'delivered'] as const satisfies readonly EventStatus[];

/**
 * The event filters the list (query string) and the bulk redelivery by filter (JSON body) share; only
 * the list converts account_id from text. `status` differs (any status vs a final one), so each adds its own.
 */
export function eventFilterFields(source: 'query' | 'body') {
  class EventFilterFields {
    @IsOptional()
    @IsRecordId({ fromQuery: source === 'query' })
    account_id?: number;

    @IsOptional()
    @IsIn(EVENT_ACTIONS, { message: `action must be one of ${EVENT_ACTIONS.join(', ')}` })
    action?: string;

    /** Inclusive lower bound on created_at. */
    @IsOptional()
    @IsTimestamp()
    since?: string;

    /** Exclusive upper bound on created_at. */
    @IsOptional()
    @IsTimestamp()
    until?: string;

    /** A value held anywhere in the message (a JSON scalar equal to it); needs since, at most 31 days. */
    @IsOptional()
    @IsMessageSearch()
    q?: string;
  }
  return EventFilterFields;
}

export class ListEventsQueryDto extends eventFilterFields('query') {
  @IsOptional()
  @IsIn(EVENT_STATUSES, { message: `status must be one of ${EVENT_STATUSES.join(', ')}` })
  status?: EventStatus;

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

export const SERIES_BUCKETS = ['1m', '1h', '1d'] as const;
export type SeriesBucket = (typeof SERIES_BUCKETS)[number];

export class StatsSeriesQueryDto {
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @IsOptional()
  @IsTimestamp()
  since?: string;

  @IsOptional()
  @IsTimestamp()
  until?: string;

  @IsOptional()
  @IsIn(SERIES_BUCKETS, { message: `bucket must be one of ${SERIES_BUCKETS.join(', ')}` })
  bucket?: SeriesBucket;
}
