import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { EventStats, EventStatus, LatencySummary, SeriesBucket, SeriesPoint, StatsSeries } from '@app/payloads';
import { SERIES_BUCKETS } from '@app/payloads';
import { EVENT_STATUSES } from '@app/persistence';
import { ApiErrorResponses } from '@app/runtime/docs';
import { adminEventsOperationId, ApiAdminOperation } from '../admin.docs';

/* Documentation of the admin statistics: counts and latency, and the per-bucket series (CONTRACT §3). */

class LatencyModel implements LatencySummary {
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

export class EventStatsModel implements EventStats {
  @ApiProperty({ type: 'integer', nullable: true })
  account_id!: number | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  since!: string | null;

  @ApiProperty({ type: 'integer' })
  total!: number;

  @ApiProperty({ type: StatusCountsModel })
  counts!: Record<EventStatus, number>;

  @ApiProperty({ type: LatencyModel })
  delivery_latency_ms!: LatencySummary;
}

export class SeriesPointModel implements SeriesPoint {
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

export class StatsSeriesModel implements StatsSeries {
  @ApiProperty({ enum: SERIES_BUCKETS })
  bucket!: SeriesBucket;

  @ApiProperty({ type: [SeriesPointModel], description: 'Oldest first, empty buckets included; at most 1500.' })
  points!: SeriesPoint[];
}

export const ApiEventStats = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('Counts by status and delivery latency percentiles', 200, EventStatsModel, undefined, adminEventsOperationId('stats')), ApiErrorResponses([404, 'The account does not exist.'], [400, 'A query parameter is malformed or out of range; `details` names it.']));

export const ApiStatsSeries = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('What happened per minute, hour or day', 200, StatsSeriesModel, 'From rollups written with the attempts. Defaults: until now, since 1 h (1m), 24 h (1h) or 7 d (1d) before.', adminEventsOperationId('series')),
    ApiErrorResponses([400, 'A query parameter is invalid, or more than 1500 points (named `since`).']),
  );
