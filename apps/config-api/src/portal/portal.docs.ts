import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses, type ErrorResponseSpec, PORTAL_SESSION_SCHEME } from '@app/runtime/docs';

export const PORTAL_TAG = 'Portal (an API user\'s own account)';

const SUCCESS: Record<number, string> = { 200: 'OK.', 201: 'Created.', 202: 'Accepted: the work goes on in the background.' };

/**
 * One portal operation: summary, success answer, and its errors. Behind a session (the default) it
 * names the portal-session scheme and its 401; `errors` adds the route's own statuses.
 */
export function ApiPortalErrors(
  summary: string,
  status: number,
  answer: Type<unknown> | null,
  description?: string,
  { session = true, errors = [] }: { session?: boolean; errors?: ErrorResponseSpec[] } = {},
): MethodDecorator {
  return applyDecorators(
    ApiTags(PORTAL_TAG),
    ApiOperation({ summary, description }),
    ApiResponse({ status, description: SUCCESS[status] ?? 'Done.', ...(answer ? { type: answer } : {}) }),
    ...(session
      ? [
          ApiBearerAuth(PORTAL_SESSION_SCHEME),
          ApiErrorResponses(
            [401, 'No session token, or an expired or unknown one (the admin token is not one).'],
            ...(errors.some((spec) => (Array.isArray(spec) ? spec[0] : spec) === 429) ? [] : [[429, 'More than 120 calls this minute in this session; `Retry-After` says when to come back.'] as ErrorResponseSpec]),
            503,
            ...errors,
          ),
        ]
      : [ApiErrorResponses([401, 'The code is used, expired or unknown.'], 503, 422, ...errors)]),
  );
}

/** `:event_id` of the portal: an id of another account answers 404 like one that does not exist. */
export function ApiPortalEventId(): MethodDecorator {
  return ApiParam({ name: 'event_id', description: "An event of this account; another account's event answers 404 like a missing one." });
}

export class PortalRedeliveryStarted {
  @ApiProperty({ format: 'uuid', description: 'Read its progress at `GET /portal/v1/redeliver/{task_id}`.' })
  task_id!: string;

  @ApiProperty({ type: 'integer', description: 'Events the filter matched.' })
  count!: number;
}

export class PortalRedeliveryProgress {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['running', 'done', 'failed'] })
  status!: string;

  @ApiProperty({ type: 'integer' })
  total!: number;

  @ApiProperty({ type: 'integer' })
  done!: number;
}
