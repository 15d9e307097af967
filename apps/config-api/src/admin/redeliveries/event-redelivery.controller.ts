import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import type { EventRedelivered, RedeliveryStarted } from '@app/payloads';
import { IdParamPipe } from '../id-param.pipe';
import { ApiAdminController, EVENTS_AND_STATS_TAG } from '../admin.docs';
import { knownShapeOrNotFound } from '../events/known-event-id';
import { BulkRedeliverDto, FilterRedeliverDto } from './redelivery-task.dto';
import { readRedeliveryDestination } from './redelivery-destination';
import { RedeliveryService } from './redelivery.service';
import { ApiRedeliverAccount, ApiRedeliverEvent, ApiRedeliverMatching } from './redeliveries.docs';
import { Audit } from '../../audit/audit.decorator';

/** Starting redeliveries: one event, everything a filter matches, an account's events in a status. */
@ApiAdminController(EVENTS_AND_STATS_TAG)
@Controller('admin/v1')
@UseGuards(AdminAccessGuard)
export class EventRedeliveryController {
  constructor(private readonly redelivery: RedeliveryService) {}

  @ApiRedeliverEvent()
  @Permission('operate')
  @Audit('event.redeliver')
  @Post('events/:event_id/redeliver')
  @HttpCode(202)
  redeliver(@Param('event_id') eventId: string, @Body() body: unknown): Promise<EventRedelivered> {
    return this.redelivery.redeliverOne(knownShapeOrNotFound(eventId), undefined, readRedeliveryDestination(body));
  }

  @ApiRedeliverMatching()
  @Permission('operate')
  @Audit('events.redeliver')
  @Post('events/redeliver')
  @HttpCode(202)
  redeliverMatching(@Body() body: FilterRedeliverDto): Promise<RedeliveryStarted> {
    return this.redelivery.redeliverMatching(body);
  }

  @ApiRedeliverAccount()
  @Permission('operate')
  @Audit('account.redeliver')
  @Post('accounts/:id/redeliver')
  @HttpCode(202)
  redeliverAccount(@Param('id', IdParamPipe) accountId: number, @Body() body: BulkRedeliverDto): Promise<RedeliveryStarted> {
    return this.redelivery.redeliverAccount(accountId, body);
  }
}
