import { Module } from '@nestjs/common';
import { EventStatsService } from './event-stats.service';
import { StatsController } from './stats.controller';
import { StatsSeriesService } from './stats-series.service';

/** Operators' statistics: counts by status with latency percentiles, and the per-bucket series. */
@Module({
  controllers: [StatsController],
  providers: [EventStatsService, StatsSeriesService],
  exports: [StatsSeriesService],
})
export class StatsModule {}
