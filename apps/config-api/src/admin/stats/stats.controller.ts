import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import type { EventStats, StatsSeries } from '@app/payloads';
import { ApiAdminController, EVENTS_AND_STATS_TAG } from '../admin.docs';
import { StatsQueryDto, StatsSeriesQueryDto } from './stats.dto';
import { EventStatsService } from './event-stats.service';
import { StatsSeriesService } from './stats-series.service';
import { ApiEventStats, ApiStatsSeries } from './stats.docs';

@ApiAdminController(EVENTS_AND_STATS_TAG)
@Controller('admin/v1')
@UseGuards(AdminAccessGuard)
export class StatsController {
  constructor(
    private readonly eventStats: EventStatsService,
    private readonly statsSeries: StatsSeriesService,
  ) {}

  @ApiEventStats()
  @Permission('read')
  @Get('stats')
  stats(@Query() query: StatsQueryDto): Promise<EventStats> {
    return this.eventStats.stats(query);
  }

  @ApiStatsSeries()
  @Permission('read')
  @Get('stats/series')
  series(@Query() query: StatsSeriesQueryDto): Promise<StatsSeries> {
    return this.statsSeries.series(query);
  }
}
