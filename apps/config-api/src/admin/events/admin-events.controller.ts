import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AdminTokenGuard, ApiError } from '@app/runtime';
import { IdParamPipe } from '../id-param.pipe';
import { FilterRedeliverDto } from '../redeliveries/redelivery-task.dto';
import { BulkRedeliverDto, ListEventsQueryDto, StatsQueryDto, StatsSeriesQueryDto } from './admin-events.dto';
import type { EventDetail, EventPage, EventRedelivered, EventStats, RedeliveryStarted, StatsSeries } from '@app/payloads';
import { AdminEventsService } from './admin-events.service';
import { EventStatsService } from './event-stats.service';
import { RedeliveryService } from './redelivery.service';
import { StatsSeriesService } from './stats-series.service';
import { ApiEventDetail, ApiEventStats, ApiListEvents, ApiRedeliverAccount, ApiRedeliverEvent, ApiRedeliverMatching, ApiStatsSeries } from './admin-events.docs';
import { ApiAdminController } from '../admin.docs';

/** Stored ids are printable ASCII of at most 128 characters; anything else cannot exist (and a NUL would upset PostgreSQL). */
export function knownShapeOrNotFound(eventId: string): string {
  if (eventId.length > 128 || !/^[\x21-\x7e]+$/.test(eventId)) throw new ApiError(404, 'not_found', 'event does not exist');
  return eventId;
}

@ApiAdminController('Admin: events and statistics')
@Controller('admin/v1')
@UseGuards(AdminTokenGuard)
export class AdminEventsController {
  constructor(
    private readonly events: AdminEventsService,
    private readonly redelivery: RedeliveryService,
    private readonly statsSeries: StatsSeriesService,
    private readonly eventStats: EventStatsService,
  ) {}

  @ApiListEvents()
  @Get('events')
  list(@Query() query: ListEventsQueryDto): Promise<EventPage> {
    return this.events.list(query);
  }

  @ApiEventDetail()
  @Get('events/:event_id')
  detail(@Param('event_id') eventId: string): Promise<EventDetail> {
    return this.events.detail(knownShapeOrNotFound(eventId));
  }

  @ApiRedeliverEvent()
  @Post('events/:event_id/redeliver')
  @HttpCode(202)
  redeliver(@Param('event_id') eventId: string): Promise<EventRedelivered> {
    return this.redelivery.redeliverOne(knownShapeOrNotFound(eventId));
  }

  @ApiRedeliverMatching()
  @Post('events/redeliver')
  @HttpCode(202)
  redeliverMatching(@Body() body: FilterRedeliverDto): Promise<RedeliveryStarted> {
    return this.redelivery.redeliverMatching(body);
  }

  @ApiRedeliverAccount()
  @Post('accounts/:id/redeliver')
  @HttpCode(202)
  redeliverAccount(@Param('id', IdParamPipe) accountId: number, @Body() body: BulkRedeliverDto): Promise<RedeliveryStarted> {
    return this.redelivery.redeliverAccount(accountId, body);
  }

  @ApiEventStats()
  @Get('stats')
  stats(@Query() query: StatsQueryDto): Promise<EventStats> {
    return this.eventStats.stats(query);
  }

  @ApiStatsSeries()
  @Get('stats/series')
  series(@Query() query: StatsSeriesQueryDto): Promise<StatsSeries> {
    return this.statsSeries.series(query);
  }
}
