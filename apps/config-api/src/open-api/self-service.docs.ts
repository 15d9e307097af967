import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiQuery } from '@nestjs/swagger';
import { EVENT_ACTIONS, LOGGED_ACTIONS } from '@app/payloads';
import type { FeedItem, FeedPage } from './event-feed.service';
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT } from './feed-cursor';
import { OpenApiCode } from './open-api-errors';
import { errorResponse, openApiError } from './open-api.docs';
import { TEST_EVENT_ACTION_PROBLEM } from './test-event.service';

class OkFields {
  @ApiProperty({ enum: [1000], example: 1000 })
  code!: 1000;

  @ApiProperty({ enum: ['OK'], example: 'OK' })
  message!: 'OK';
}

export class FeedItemView implements FeedItem {
  @ApiProperty({ example: 'evt_01JF3Z8W6Q2M4N5P6R7S8T9V0W' })
  event_id!: string;

  @ApiProperty({ enum: LOGGED_ACTIONS, description: 'One of the seed\'s actions, or an operational event about one of the account\'s destinations (`Destination_failing`, `Destination_disabled`, `Destination_recovered`), which no permission governs.' })
  action!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The message as ingest accepted it; for an operational event `{destination_id, target, reason, at}` (the `OperationalEventMessage` schema of the webhooks section).' })
  message!: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class FeedAnswer extends OkFields implements FeedPage {
  @ApiProperty({ type: [FeedItemView] })
  items!: FeedItemView[];

  @ApiProperty({ description: 'Always a string: pass it as `after` to poll again (the same cursor when nothing new came).', example: '48213.1870000000000000001' })
  next_cursor!: string;
}

export class SendTestEventBody {
  @ApiProperty({ enum: EVENT_ACTIONS, example: 'Customer_create' })
  action!: string;
}

export class SendTestEventAnswer extends OkFields {
  @ApiProperty({ example: 'test_5f0c1e0a9b7d4c3e8a2b6d1f0e9c8b7a', description: 'Starts with `test_`.' })
  event_id!: string;
}

export const SEND_TEST_EVENT_ERRORS = { action: TEST_EVENT_ACTION_PROBLEM };

export function ApiFeedQuery(): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'after', required: false, description: 'A `next_cursor` from an earlier page; absent: from the oldest kept event. Anything else is code 2000 naming `after`.', schema: { type: 'string', pattern: '^[0-9]{1,20}\\.[0-9]{1,19}$' } }),
    errorResponse(400, 'A malformed `after` or `limit` (code 2000 naming the parameter).', {
      after: openApiError(OpenApiCode.invalidParam, 'Unknown error', 'after must be a next_cursor returned by this API'),
      limit: openApiError(OpenApiCode.invalidParam, 'Unknown error', `limit must be an integer from 1 to ${FEED_MAX_LIMIT}`),
    }),
    ApiQuery({ name: 'limit', required: false, description: `Events per page, 1 to ${FEED_MAX_LIMIT} [${FEED_DEFAULT_LIMIT}]; anything else is code 2000 naming \`limit\`.`, schema: { type: 'integer', minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT } }),
  );
}

export class PortalLinkAnswer extends OkFields {
  @ApiProperty({ example: 'https://callbacks.example.com/portal#Yl5o0yq3m2m9cLk2Qh2K9d6rjTn5b1dV8w3X0p4s7aE', description: 'The code rides in the fragment and works once.' })
  url!: string;

  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}
