import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { EVENT_ACTIONS, type EventAction, IsRecordId, MAX_RECORD_ID } from '@app/payloads';
import { EVENT_ID_MAX_LENGTH, EVENT_ID_PATTERN } from './event-id';

export const MAX_BATCH_EVENTS = 1000;

/** The envelope of one event (CONTRACT §4); the `message` itself is checked by validateEventMessage. */
export class IngestEventDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID, description: 'The account the event belongs to.', example: 42 })
  @IsRecordId()
  account_id!: number;

  @ApiProperty({ enum: EVENT_ACTIONS, description: 'One of the eleven event names.', example: 'Customer_create' })
  @IsIn(EVENT_ACTIONS, { message: `action must be one of ${EVENT_ACTIONS.join(', ')}` })
  action!: EventAction;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The event data, checked against the seed's table for the action (types, formats, value sets, required identifying fields); fields the seed does not list are kept and delivered unchanged.",
    example: { id: 1, nick_name: 'Ann', tags: ['vip'] },
  })
  @IsObject({ message: 'message must be a JSON object' })
  message!: Record<string, unknown>;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: EVENT_ID_MAX_LENGTH,
    pattern: EVENT_ID_PATTERN.source,
    description: 'Your id for the event (printable ASCII, no spaces), unique across the service; a repeat from the same account is accepted once. Assigned by the server when absent.',
    example: 'order-1234-created',
  })
  @IsOptional()
  @IsString({ message: 'event_id must be a string' })
  @MinLength(1, { message: 'event_id must not be empty' })
  @MaxLength(EVENT_ID_MAX_LENGTH, { message: `event_id must be at most ${EVENT_ID_MAX_LENGTH} characters long` })
  @Matches(EVENT_ID_PATTERN, { message: 'event_id must consist of printable ASCII characters without spaces or control characters' })
  event_id?: string;
}

/**
 * Items are deliberately not validated here: one bad item must reject only itself (CONTRACT §4),
 * so the service checks each one and reports it in `results`.
 */
export class IngestBatchDto {
  @ApiProperty({ type: [IngestEventDto], maxItems: MAX_BATCH_EVENTS, description: `Up to ${MAX_BATCH_EVENTS} events; each is checked and stored on its own.` })
  @IsArray({ message: 'events must be an array' })
  @ArrayMaxSize(MAX_BATCH_EVENTS, { message: `events must contain at most ${MAX_BATCH_EVENTS} items` })
  events!: unknown[];
}
