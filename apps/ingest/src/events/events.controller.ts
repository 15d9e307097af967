import { Body, Controller, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IngestTokenGuard } from '@app/runtime';
import { type BatchResult, EventsService, type IngestResult, ingestStatus } from './events.service';
import { ApiEventsController, ApiIngestBatch, ApiIngestOne } from './events.docs';

/**
 * Bodies are typed as plain objects so the global ValidationPipe leaves them alone: the envelope checks
 * (ingest-envelope.ts) judge them without copying and hand anything unusual to that same pipe. No
 * interceptor: outcomes are counted by the service, which saves Nest's per-request async scope.
 * Requests to exactly these paths with a JSON body are served ahead of Express by EventsFastPath with
 * the same steps; this controller serves the rest (`?query`, a trailing slash, other content types)
 * and declares both routes for the docs.
 */
@ApiEventsController()
@Controller('v1/events')
@UseGuards(IngestTokenGuard)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /** 202 when stored now, 200 when the same account already sent this event_id (CONTRACT §4). */
  @ApiIngestOne()
  @Post()
  async ingest(@Body() body: Record<string, unknown>, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<IngestResult> {
    const result = await this.events.ingestOne(body, request.headers);
    response.status(ingestStatus(result));
    return result;
  }

  @ApiIngestBatch()
  @Post('batch')
  @HttpCode(202)
  async ingestBatch(@Body() body: Record<string, unknown>, @Req() request: Request): Promise<BatchResult> {
    return { results: await this.events.ingestBatchBody(body, request.headers) };
  }
}
