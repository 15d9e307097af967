import { Module } from '@nestjs/common';
import { AdminEventsController } from './admin-events.controller';
import { AdminEventsService } from './admin-events.service';
import { RedeliveriesModule } from '../redeliveries/redeliveries.module';
import { StatsSeriesService } from './stats-series.service';
import { EventStatsService } from './event-stats.service';

/**
 * Operators' view of events: list, detail with attempts, redelivery (one event or an account's
 * events in a status, or everything a filter matches, as background tasks) and stats.
 */
@Module({
  imports: [RedeliveriesModule],
  controllers: [AdminEventsController],
  providers: [AdminEventsService, StatsSeriesService, EventStatsService],
  exports: [AdminEventsService, StatsSeriesService, RedeliveriesModule],
})
export class AdminEventsModule {}
