import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import type { EventDetail, EventPage } from '@app/payloads';
import { ListEventsQueryDto } from './admin-events.dto';
import { AdminEventsService } from './admin-events.service';
import { ApiEventDetail, ApiListEvents } from './admin-events.docs';
import { knownShapeOrNotFound } from './known-event-id';
import { ApiAdminController, EVENTS_AND_STATS_TAG } from '../admin.docs';

@ApiAdminController(EVENTS_AND_STATS_TAG)
@Controller('admin/v1')
@UseGuards(AdminAccessGuard)
export class AdminEventsController {
  constructor(private readonly events: AdminEventsService) {}

  @ApiListEvents()
  @Permission('read')
  @Get('events')
  list(@Query() query: ListEventsQueryDto): Promise<EventPage> {
    return this.events.list(query);
  }

  @ApiEventDetail()
  @Permission('read')
  @Get('events/:event_id')
  detail(@Param('event_id') eventId: string): Promise<EventDetail> {
    return this.events.detail(knownShapeOrNotFound(eventId));
  }
}
