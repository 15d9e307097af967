import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrorResponses, ApiIngestAuth, ApiJsonBodyErrors, ErrorDetailBody } from '@app/runtime/docs';
import { IngestBatchDto, IngestEventDto } from './ingest-event.dto';
import type { BatchItemResult, BatchResult, IngestResult } from './events.service';

/* Documentation of `POST /v1/events` and `/v1/events/batch` (CONTRACT §4). */

export class IngestAnswer implements IngestResult {
  @ApiProperty({ description: 'The event id (yours, or the one the server assigned).', example: 'evt_01HZY3M4K2Q9V7W8X9Y0Z1A2B3' })
  event_id!: string;

  @ApiProperty({ enum: ['accepted', 'duplicate'], description: '`accepted`: stored now (202). `duplicate`: this account already sent this event_id; nothing new happens (200).' })
  status!: IngestResult['status'];
}

export class BatchItemAnswer implements BatchItemResult {
  @ApiProperty({ type: 'integer', description: 'Position of the item in `events`.', example: 0 })
  index!: number;

  @ApiPropertyOptional({ description: 'Set for accepted and duplicate items.' })
  event_id?: string;

  @ApiProperty({ enum: ['accepted', 'duplicate', 'rejected'] })
  status!: BatchItemResult['status'];

  @ApiPropertyOptional({ type: [ErrorDetailBody], description: 'Why the item was rejected (field paths relative to the item, e.g. `message.id`).' })
  details?: ErrorDetailBody[];
}

export class BatchAnswer implements BatchResult {
  @ApiProperty({ type: [BatchItemAnswer] })
  results!: BatchItemAnswer[];
}

export function ApiEventsController(): ClassDecorator {
  return applyDecorators(ApiTags('Events'), ApiIngestAuth());
}

export function ApiIngestOne(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      summary: 'Ingest one event',
      description: 'Answers only after the event is durably stored; then it is queued for delivery to the account\'s push_url.',
    }),
    ApiBody({ type: IngestEventDto }),
    ApiExtraModels(IngestAnswer),
    ApiResponse({ status: 202, description: 'Stored; it will be delivered.', content: { 'application/json': { schema: { $ref: getSchemaPath(IngestAnswer) }, example: { event_id: 'order-1234-created', status: 'accepted' } } } }),
    ApiResponse({ status: 200, description: 'This account already sent this event_id: accepted once, no second delivery.', content: { 'application/json': { schema: { $ref: getSchemaPath(IngestAnswer) }, example: { event_id: 'order-1234-created', status: 'duplicate' } } } }),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, 'The account does not exist.'], [409, 'The event_id is already used by another account.'], [422, 'The envelope or the message is invalid; `details` lists each field path (e.g. `message.cellphones[0].id`) and the problem.']),
  );
}

export function ApiIngestBatch(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Ingest up to 1000 events', description: 'Valid items are stored even when others are rejected; `results` has one entry per item, in order.' }),
    ApiBody({ type: IngestBatchDto }),
    ApiResponse({ status: 202, description: 'Every item was judged; see each result.', type: BatchAnswer }),
    ApiJsonBodyErrors(),
    ApiErrorResponses([422, '`events` is not an array or has more than 1000 items.']),
  );
}
