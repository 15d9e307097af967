import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { AttemptView, EventDetail, EventListItem, EventPage, EventStatus } from '@app/payloads';
import { LOGGED_ACTIONS } from '@app/payloads';
import { EVENT_STATUSES } from '@app/persistence';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ApiAdminOperation, CursorPageModel, NEXT_PAGE_CURSOR } from '../admin.docs';

/* Documentation of the admin event log: the list and one event with its attempts (CONTRACT §3). */

export class EventModel implements EventListItem {
  @ApiProperty({ example: 'evt_01HZY3M4K2Q9V7W8X9Y0Z1A2B3' })
  event_id!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ enum: LOGGED_ACTIONS })
  action!: string;

  @ApiProperty({ enum: EVENT_STATUSES, description: 'queued, retrying, delivered, failed (retries exhausted), expired (its destination\'s deadline passed), filtered (permission off), no_endpoint (no push_url).' })
  status!: EventStatus;

  @ApiProperty({ type: 'integer', description: 'Attempts made in the current series.' })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  delivered_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;

  @ApiProperty({ description: 'Its message and attempt bodies were cleared by an erasure.' })
  erased!: boolean;
}

export class EventPageModel extends CursorPageModel<EventListItem>(EventModel, NEXT_PAGE_CURSOR) implements EventPage {}

export class AttemptModel implements AttemptView {
  @ApiProperty({ type: 'integer' })
  attempt!: number;

  @ApiProperty({ type: 'integer', description: 'Which attempt series (each redelivery starts a new one).' })
  series!: number;

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ type: 'integer' })
  duration_ms!: number;

  @ApiProperty()
  url!: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  request_headers!: Record<string, string>;

  @ApiProperty({ description: 'The exact bytes sent.' })
  request_body!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when no answer came (time-out, connection error, open circuit).' })
  response_status!: number | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  response_headers!: Record<string, string> | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Cut at 4 KiB.' })
  response_body!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  error!: string | null;
}

export class DeliveryModel {
  @ApiProperty({ example: 'primary', description: '`primary` (the push_url) or a destination id (`dst_…`), CONTRACT §11.' })
  destination_id!: string;

  @ApiProperty({ enum: EVENT_STATUSES, description: 'A delivery waiting on a paused destination reads `queued`, with no attempts.' })
  status!: string;

  @ApiProperty({ type: 'string', nullable: true, description: "Why it failed, e.g. 'destination deleted'." })
  last_error!: string | null;

  @ApiProperty({ type: [AttemptModel], description: "This destination's attempts, of every series." })
  attempts!: AttemptView[];
}

export class EventDetailModel implements EventDetail {
  @ApiProperty()
  event_id!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ enum: LOGGED_ACTIONS })
  action!: string;

  @ApiProperty({ enum: EVENT_STATUSES })
  status!: EventStatus;

  @ApiProperty({ type: 'integer' })
  series!: number;

  @ApiProperty({ type: 'integer' })
  attempt_count!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  delivered_at!: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  next_attempt_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The message as ingested (redacted keys hold "[redacted]" once the event ended); null once erased.' })
  message!: Record<string, unknown> | null;

  @ApiProperty({ description: 'Its message and attempt bodies were cleared by an erasure.' })
  erased!: boolean;

  @ApiProperty({ type: [AttemptModel], description: "Every attempt to the primary destination (the push_url), of every series." })
  attempts!: AttemptView[];

  @ApiProperty({ type: [DeliveryModel], description: 'Every destination that took the event, the primary first: its status, last error and attempts.' })
  deliveries!: DeliveryModel[];
}

export const EVENT_NOT_FOUND = [404, 'The event does not exist.'] as const;

export const ApiListEvents = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('Search the delivery log', 200, EventPageModel, 'Newest first, stable cursor pages. `q` finds events whose message holds a value; it needs `since` and a range of at most 31 days.'),
    ApiErrorResponses([400, 'A filter is invalid (the parameter is named), or `q` without `since` or over more than 31 days.']),
  );

export const ApiEventDetail = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('An event with its message and every attempt', 200, EventDetailModel), ApiErrorResponses([...EVENT_NOT_FOUND]));
