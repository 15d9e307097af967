import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody } from '@nestjs/swagger';
import type { EventDetail, EventPage, EventRedelivered } from '@app/payloads';
import { AdminEventsService } from '../admin/events/admin-events.service';
import { knownShapeOrNotFound } from '../admin/events/known-event-id';
import { EventDetailModel, EventPageModel } from '../admin/events/admin-events.docs';
import { EventRedeliveredModel, RedeliverEventBody } from '../admin/redeliveries/redeliveries.docs';
import { readRedeliveryDestination } from '../admin/redeliveries/redelivery-destination';
import { RedeliveryService } from '../admin/redeliveries/redelivery.service';
import { RedeliveryTasks } from '../admin/redeliveries/redelivery-tasks.service';
import { PortalAccount, PortalSessionGuard } from '../portal-access/portal-session.guard';
import { PortalLimits } from '../portal-access/portal-limits';
import { PortalEventsQueryDto, PortalRedeliverDto } from './portal.dto';
import { ApiPortalErrors, ApiPortalEventId, PortalRedeliveryProgress, PortalRedeliveryStarted } from './portal.docs';
import { Audit } from '../audit/audit.decorator';

/**
 * The delivery log of the session's account (CONTRACT §10), served by the admin services with the
 * account as their scope: an id of another account is not found, exactly like a missing one.
 */
@Controller('portal/v1')
@UseGuards(PortalSessionGuard)
export class PortalEventsController {
  constructor(
    private readonly events: AdminEventsService,
    private readonly redelivery: RedeliveryService,
    private readonly tasks: RedeliveryTasks,
    private readonly limits: PortalLimits,
  ) {}

  @ApiPortalErrors('List the deliveries', 200, EventPageModel, 'Newest first; the filters of the admin list plus `q` (a value inside messages).', { errors: [422] })
  @Get('events')
  list(@PortalAccount() accountId: number, @Query() query: PortalEventsQueryDto): Promise<EventPage> {
    return this.events.list({ ...query, account_id: accountId });
  }

  @ApiPortalErrors('Read one event with its attempts', 200, EventDetailModel, undefined, { errors: [404] })
  @ApiPortalEventId()
  @Get('events/:event_id')
  detail(@PortalAccount() accountId: number, @Param('event_id') eventId: string): Promise<EventDetail> {
    return this.events.detail(knownShapeOrNotFound(eventId), accountId);
  }

  @ApiPortalErrors('Redeliver one event', 202, EventRedeliveredModel, 'A new attempt series starts now, to every destination that took the event, or only to `{"destination_id"}` when given.', { errors: [404, 422] })
  @ApiBody({ type: RedeliverEventBody, required: false })
  @ApiPortalEventId()
  @Audit('event.redeliver')
  @Post('events/:event_id/redeliver')
  @HttpCode(202)
  redeliver(@PortalAccount() accountId: number, @Param('event_id') eventId: string, @Body() body: unknown): Promise<EventRedelivered> {
    return this.redelivery.redeliverOne(knownShapeOrNotFound(eventId), accountId, readRedeliveryDestination(body));
  }

  @ApiPortalErrors(
    'Redeliver every event a filter matches',
    202,
    PortalRedeliveryStarted,
    'A background task; follow it at `GET /portal/v1/redeliver/{task_id}`. One at a time per account, and at most 5 a minute.',
    {
      errors: [
        400,
        [409, 'A bulk redelivery of this account is still running (this call does not count toward the 5).'],
        422,
        [429, 'The account asked for 5 bulk redeliveries this minute; `Retry-After` says when to come back.'],
      ],
    },
  )
  @Audit('events.redeliver')
  @Post('redeliver')
  @HttpCode(202)
  async redeliverMatching(
    @PortalAccount() accountId: number,
    @Body() body: PortalRedeliverDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PortalRedeliveryStarted> {
    await this.limits.admitBulkRedelivery(accountId, response);
    const { task_id, count } = await this.tasks.start({ account_id: accountId, status: body.status, action: body.action, since: body.since, until: body.until });
    return { task_id, count };
  }

  @ApiPortalErrors('Follow a bulk redelivery', 200, PortalRedeliveryProgress, undefined, { errors: [404] })
  @Get('redeliver/:task_id')
  async progress(@PortalAccount() accountId: number, @Param('task_id') taskId: string): Promise<PortalRedeliveryProgress> {
    const { id, status, total, done } = await this.tasks.get(taskId, accountId);
    return { id, status, total, done };
  }
}
