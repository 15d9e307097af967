import { Body, Controller, Get, HttpCode, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { LimitUnavailableError } from '@app/runtime';
import { Caller, OpenApiAuthGuard, type OpenApiCaller } from './open-api-auth.guard';
import { OpenApiJsonCall } from './open-api-call.decorator';
import { EventFeedService, type FeedPage } from './event-feed.service';
import { parseFeedCursor, parseFeedLimit } from './feed-cursor';
import { invalidParam, OpenApiCode, rateLimited, serviceUnavailable } from './open-api-errors';
import { readTestEventAction, TEST_EVENT_ACTION_PROBLEM, TestEventLimitError, TestEventService } from './test-event.service';
import { ApiOpenApiBody, ApiOpenApiOperation, ApiSignedOpenApi } from './open-api.docs';
import { ApiFeedQuery, FeedAnswer, PortalLinkAnswer, SEND_TEST_EVENT_ERRORS, SendTestEventAnswer, SendTestEventBody } from './self-service.docs';
import { PortalAccessService } from '../portal-access/portal-access.service';
import { DEFAULT_LINK_TTL, parseLinkTtl } from '../portal-access/portal-ttl';
import { Audit } from '../audit/audit.decorator';

/** The signed self-service operations of CONTRACT §10: the pull feed, test events and portal links. */
@ApiSignedOpenApi()
@Controller('open_api_v1')
@UseGuards(OpenApiAuthGuard)
export class SelfServiceController {
  constructor(
    private readonly feed: EventFeedService,
    private readonly testEvents: TestEventService,
    private readonly portalAccess: PortalAccessService,
  ) {}

  @ApiOpenApiOperation(
    'list_events',
    'Pull the events (the feed)',
    FeedAnswer,
    'The events the permissions allow (and test events), in the order ingest accepted them, oldest first after `after`. ' +
      'An event is served only once every event accepted before it is visible, so following `next_cursor` never misses one.',
  )
  @ApiFeedQuery()
  @Get('events')
  events(@Caller() caller: OpenApiCaller, @Query('after') after: unknown, @Query('limit') limit: unknown): Promise<FeedPage> {
    return this.feed.page(caller.accountId, parseFeedCursor(after), parseFeedLimit(limit));
  }

  @ApiOpenApiOperation(
    'send_test_event',
    'Send a test event',
    SendTestEventAnswer,
    "The example message of the action, delivered to the push URL like any event (signed, logged, retried) even when the action's permission is off.",
  )
  @ApiOpenApiBody(SendTestEventBody, SEND_TEST_EVENT_ERRORS)
  @OpenApiJsonCall('send_test_event')
  async sendTestEvent(
    @Caller() caller: OpenApiCaller,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SendTestEventAnswer> {
    const action = readTestEventAction(body);
    if (!action) throw invalidParam(TEST_EVENT_ACTION_PROBLEM);
    try {
      return { code: OpenApiCode.ok, message: 'OK', ...(await this.testEvents.send(caller.accountId, action)) };
    } catch (error) {
      if (error instanceof TestEventLimitError) {
        response.setHeader('Retry-After', String(error.retryAfterSeconds));
        throw rateLimited(error.message);
      }
      if (error instanceof LimitUnavailableError) throw serviceUnavailable(`${error.message}; try again shortly`);
      throw error;
    }
  }

  @ApiOpenApiOperation(
    'portal_link',
    'Make a link to your portal',
    PortalLinkAnswer,
    `A one-time link (\`<PUBLIC_URL>/portal#<code>\`) to this account's portal, valid for ${DEFAULT_LINK_TTL}.`,
  )
  @Audit('portal_link.create')
  @Post('portal_link')
  @HttpCode(200)
  async portalLink(@Caller() caller: OpenApiCaller): Promise<PortalLinkAnswer> {
    const link = await this.portalAccess.createLink(caller.accountId, parseLinkTtl(undefined) ?? 0);
    return { code: OpenApiCode.ok, message: 'OK', ...link };
  }
}
