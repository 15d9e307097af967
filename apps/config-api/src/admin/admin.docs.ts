import { applyDecorators, type Type } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { BreakerState, Page } from '@app/payloads';
import { MAX_RECORD_ID } from '@app/payloads';
import { ApiAdminAuth, ApiErrorResponses, type ErrorResponseSpec } from '@app/runtime/docs';

/* Shared pieces of the admin API's documentation (CONTRACT §3 and the console additions). */

/** Every admin controller: its tag, `Authorization: Bearer $ADMIN_TOKEN`, 401 and 503. */
export function ApiAdminController(tag: string): ClassDecorator {
  return applyDecorators(ApiTags(tag), ApiAdminAuth());
}

const SUCCESS: Record<number, string> = {
  200: 'OK.',
  201: 'Created.',
  202: 'Accepted: the work goes on in the background.',
  204: 'Done; no body.',
};

/** One tag over the event log, its redelivery and the statistics, though they live in three folders. */
export const EVENTS_AND_STATS_TAG = 'Admin: events and statistics';

/**
 * The operation id these routes had when one AdminEventsController served the event log, its
 * redelivery and the stats: kept, so clients generated from the document keep their method names.
 */
export const adminEventsOperationId = (method: string): string => `AdminEvents_${method}`;

/** Summary, description and the success answer of one admin operation (operationId: see adminEventsOperationId). */
export function ApiAdminOperation(
  summary: string,
  status: number,
  answer: Type<unknown> | null,
  description?: string,
  operationId?: string,
): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary, description, operationId }),
    ApiResponse({ status, description: SUCCESS[status] ?? 'Done.', ...(answer ? { type: answer } : {}) }),
  );
}

/** A path id (`:id`, `:bot_id`), checked by IdParamPipe. */
export function ApiIdParam(name = 'id'): MethodDecorator {
  return ApiParam({ name, schema: { type: 'integer', minimum: 1, maximum: MAX_RECORD_ID } });
}

/** Descriptions shared by several admin filters. */
export const TIMESTAMP_DESCRIPTION = 'An ISO 8601 date-time, e.g. `2026-01-31T12:00:00Z`.';
export const ID_PARAM_PROBLEM = 'A path id that is not an integer from 1 to 2147483647 (`details` names it).';
export const BODY_FIELD_PROBLEM = 'A body field is invalid (`details` names it).';
export const NEXT_PAGE_CURSOR = 'Pass as `cursor` for the next page; null on the last page.';

/**
 * An operation on the account its path's `:id` names: 404 when there is none, 400 for an id that is
 * not one, then the route's own errors (applied after a body's 400, so the id's text is the one shown).
 */
export function ApiAccountOperation(operation: MethodDecorator, ...errors: ErrorResponseSpec[]): MethodDecorator {
  return applyDecorators(ApiIdParam(), operation, ApiErrorResponses([404, 'The account does not exist.'], [400, ID_PARAM_PROBLEM], ...errors));
}

/** The answer of a paged admin list (`Page<T>`): one page of `item` and the cursor of the next one. */
export function CursorPageModel<T>(item: Type<unknown>, nextCursorDescription?: string): Type<Page<T>> {
  class CursorPage implements Page<T> {
    @ApiProperty({ type: [item] })
    items!: T[];

    @ApiProperty({ type: 'string', nullable: true, description: nextCursorDescription })
    next_cursor!: string | null;
  }
  return CursorPage;
}

/** A breaker's state as the workers keep it in Redis. */
export class EndpointStateModel implements BreakerState {
  @ApiProperty({ enum: ['closed', 'open', 'half_open'], description: 'closed: delivering; open: not calling until `retry_at`; half_open: one probe in flight.' })
  state!: BreakerState['state'];

  @ApiProperty({ type: 'integer' })
  consecutive_failures!: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  opened_at!: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  retry_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;
}
