import { IsIn, IsOptional } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { LOGGED_ACTIONS } from '@app/payloads';
import { EVENT_STATUSES, type EventStatus } from '@app/persistence';
import { IsMessageSearch } from './message-search.decorator';
import { TIMESTAMP_TEXT, TimestampFilter } from '../timestamp';
import { AccountIdFilter, PageCursor, PageLimit } from '../page-query.decorators';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/**
 * The event filters the list (query string) and the bulk redelivery by filter (JSON body) share; only
 * the list converts account_id from text. `status` differs (any status vs a final one), so each adds its own.
 */
export function eventFilterFields(source: 'query' | 'body') {
  class EventFilterFields {
    @AccountIdFilter(source === 'query')
    account_id?: number;

    @ApiPropertyOptional({ enum: LOGGED_ACTIONS })
    @IsOptional()
    @IsIn(LOGGED_ACTIONS, { message: `action must be one of ${LOGGED_ACTIONS.join(', ')}` })
    action?: string;

    /** Inclusive lower bound on created_at. */
    @TimestampFilter({ description: 'Inclusive lower bound on created_at: ' + TIMESTAMP_TEXT })
    since?: string;

    /** Exclusive upper bound on created_at. */
    @TimestampFilter({ description: 'Exclusive upper bound on created_at: ' + TIMESTAMP_TEXT })
    until?: string;

    /** A value held anywhere in the message (a JSON scalar equal to it); needs since, at most 31 days. */
    @ApiPropertyOptional({ minLength: 1, maxLength: 256, description: 'A value held anywhere in the message (a JSON scalar equal to it: `12345` finds `{"customer_id": 12345}`); needs `since`, a range of at most 31 days.' })
    @IsOptional()
    @IsMessageSearch()
    q?: string;
  }
  return EventFilterFields;
}

export class ListEventsQueryDto extends eventFilterFields('query') {
  @ApiPropertyOptional({ enum: EVENT_STATUSES })
  @IsOptional()
  @IsIn(EVENT_STATUSES, { message: `status must be one of ${EVENT_STATUSES.join(', ')}` })
  status?: EventStatus;

  @PageLimit(MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE)
  limit?: number;

  @PageCursor()
  cursor?: string;
}
