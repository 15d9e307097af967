import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { EVENT_ACTIONS, SERIES_BUCKETS } from '@app/payloads';
import { EVENT_STATUSES } from '@app/persistence';
import { ApiErrorResponses, ApiJsonBodyErrors } from '@app/runtime/docs';
import { ApiAdminOperation, ApiIdParam, ID_PARAM_PROBLEM, RedeliveryStartedModel } from '../admin.docs';

/* Documentation of the admin event log, redelivery and statistics (CONTRACT §3). */

export class EventModel {
  @ApiProperty({ example: 'evt_01HZY3M4K2Q9V7W8X9Y0Z1A2B3' })
  event_id!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ enum: EVENT_ACTIONS })
  action!: string;

  @ApiProperty({ enum: EVENT_STATUSES, description: 'queued, retrying, delivered, failed (retries exhausted), filtered (permission off), no_endpoint (no push_url).' })
  status!: string;

  @ApiProperty({ type: 'integer', description: 'Attempts made in the current series.' })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  delivered_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;
}

export class EventPageModel {
  @ApiProperty({ type: [EventModel] })
  items!: EventModel[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  next_cursor!: string | null;
}

export class AttemptModel {
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

export class EventDetailModel {
  @ApiProperty()
  event_id!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ enum: EVENT_ACTIONS })
  action!: string;

  @ApiProperty({ enum: EVENT_STATUSES })
  status!: string;

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

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The message as ingested.' })
  message!: Record<string, unknown>;

  @ApiProperty({ type: [AttemptModel], description: 'Every attempt, of every series.' })
  attempts!: AttemptModel[];
}

export class EventRedeliveredModel {
  @ApiProperty()
  event_id!: string;

  @ApiProperty({ enum: ['queued'] })
  status!: string;

  @ApiProperty({ type: 'integer', description: 'The new attempt series.' })
  series!: number;
}

class LatencyModel {
  @ApiProperty({ type: 'integer', description: 'Delivered events measured.' })
  count!: number;

  @ApiProperty({ type: 'number', nullable: true, description: 'ms from creation to delivery' })
  p50!: number | null;

  @ApiProperty({ type: 'number', nullable: true })
  p95!: number | null;

  @ApiProperty({ type: 'number', nullable: true })
  p99!: number | null;
}

class StatusCountsModel {}
for (const status of EVENT_STATUSES) ApiProperty({ type: 'integer' })(StatusCountsModel.prototype, status);

export class EventStatsModel {
  @ApiProperty({ type: 'integer', nullable: true })
  account_id!: number | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  since!: string | null;

  @ApiProperty({ type: 'integer' })
  total!: number;

  @ApiProperty({ type: StatusCountsModel })
  counts!: StatusCountsModel;

  @ApiProperty({ type: LatencyModel })
  delivery_latency_ms!: LatencyModel;
}

export class SeriesPointModel {
  @ApiProperty({ format: 'date-time', description: 'Start of the bucket.' })
  t!: string;

  @ApiProperty({ type: 'integer', description: 'Events that reached delivered in the bucket.' })
  delivered!: number;

  @ApiProperty({ type: 'integer', description: 'Events that reached failed in the bucket.' })
  failed!: number;

  @ApiProperty({ type: 'integer' })
  attempts!: number;

  @ApiProperty({ type: 'integer' })
  failed_attempts!: number;

  @ApiProperty({ type: 'number', nullable: true, description: 'Delivery latency percentiles in ms; null in an empty bucket.' })
  p50!: number | null;

  @ApiProperty({ type: 'number', nullable: true })
  p95!: number | null;

  @ApiProperty({ type: 'number', nullable: true })
  p99!: number | null;
}

export class StatsSeriesModel {
  @ApiProperty({ enum: SERIES_BUCKETS })
  bucket!: string;

  @ApiProperty({ type: [SeriesPointModel], description: 'Oldest first, empty buckets included; at most 1500.' })
  points!: SeriesPointModel[];
}

const EVENT_NOT_FOUND = [404, 'The event does not exist.'] as const;

export const ApiListEvents = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('Search the delivery log', 200, EventPageModel, 'Newest first, stable cursor pages. `q` finds events whose message holds a value; it needs `since` and a range of at most 31 days.'),
    ApiErrorResponses([422, 'A filter is invalid (the parameter is named), or `q` without `since` or over more than 31 days.']),
  );

export const ApiEventDetail = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('An event with its message and every attempt', 200, EventDetailModel), ApiErrorResponses([...EVENT_NOT_FOUND]));

export const ApiRedeliverEvent = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('Redeliver one event', 202, EventRedeliveredModel, 'A new attempt series starts now; its first call is made even when the circuit is open.'), ApiErrorResponses([...EVENT_NOT_FOUND]));

export const ApiRedeliverMatching = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('Redeliver every event a filter matches', 202, RedeliveryStartedModel, 'A background task (stored, resumed after a restart); status defaults to failed; at least one filter is required.'),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, 'The account_id does not exist.'], [422, 'No filter given, or a filter is invalid.']),
  );

export const ApiRedeliverAccount = (): MethodDecorator =>
  applyDecorators(
    ApiIdParam(),
    ApiAdminOperation("Redeliver an account's events in a status", 202, RedeliveryStartedModel, 'A background task; read its progress with the task_id.'),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, 'The account does not exist.'], [422, ID_PARAM_PROBLEM]),
  );

export const ApiEventStats = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('Counts by status and delivery latency percentiles', 200, EventStatsModel), ApiErrorResponses([404, 'The account does not exist.'], 422));

export const ApiStatsSeries = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('What happened per minute, hour or day', 200, StatsSeriesModel, 'From rollups written with the attempts. Defaults: until now, since 1 h (1m), 24 h (1h) or 7 d (1d) before.'),
    ApiErrorResponses([422, 'A parameter is invalid, or more than 1500 points (named `since`).']),
  );
