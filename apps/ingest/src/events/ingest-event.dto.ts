import { ArrayMaxSize, IsArray, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { EVENT_ACTIONS, type EventAction, IsRecordId } from '@app/payloads';
import { EVENT_ID_MAX_LENGTH, EVENT_ID_PATTERN } from './event-id';

export const MAX_BATCH_EVENTS = 1000;

/** The envelope of one event (CONTRACT §4); the `message` itself is checked by validateEventMessage. */
export class IngestEventDto {
  @IsRecordId()
  account_id!: number;

  @IsIn(EVENT_ACTIONS, { message: `action must be one of ${EVENT_ACTIONS.join(', ')}` })
  action!: EventAction;

  @IsObject({ message: 'message must be a JSON object' })
  message!: Record<string, unknown>;

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
  @IsArray({ message: 'events must be an array' })
  @ArrayMaxSize(MAX_BATCH_EVENTS, { message: `events must contain at most ${MAX_BATCH_EVENTS} items` })
  events!: unknown[];
}
