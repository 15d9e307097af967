import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES, type BotCallOutcome, type BotWebhookType } from '@app/persistence';
import { IsRecordId, queryInteger } from '@app/payloads';

export const BOT_TIMEOUT_MIN_MS = 100;
export const BOT_TIMEOUT_MAX_MS = 30_000;
export const BOT_TIMEOUT_DEFAULT_MS = 5000;

export class CreateBotWebhookDto {
  /** The seed's integrationName; it is also signed into every message-trigger call. */
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(128)
  name!: string;

  @IsIn(BOT_WEBHOOK_TYPES, { message: `type must be one of ${BOT_WEBHOOK_TYPES.join(', ')}` })
  type!: BotWebhookType;

  /** Checked further (scheme, length, private addresses) by checkTargetUrl in the service. */
  @IsString({ message: 'url must be a string' })
  url!: string;

  @IsString({ message: 'key must be a string' })
  @IsNotEmpty({ message: 'key must not be empty' })
  @MaxLength(256)
  key!: string;

  @IsOptional()
  @IsInt({ message: 'timeout_ms must be an integer' })
  @Min(BOT_TIMEOUT_MIN_MS)
  @Max(BOT_TIMEOUT_MAX_MS)
  timeout_ms?: number;
}


export const BOT_CALLS_MAX_LIMIT = 500;
export const BOT_CALLS_DEFAULT_LIMIT = 50;

export class ListBotCallsQueryDto {
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @IsOptional()
  @IsIn(BOT_WEBHOOK_TYPES, { message: `type must be one of ${BOT_WEBHOOK_TYPES.join(', ')}` })
  type?: BotWebhookType;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  integration_name?: string;

  @IsOptional()
  @IsIn(BOT_CALL_OUTCOMES, { message: `outcome must be one of ${BOT_CALL_OUTCOMES.join(', ')}` })
  outcome?: BotCallOutcome;

  @IsOptional()
  @IsISO8601({}, { message: 'since must be an ISO 8601 date-time' })
  since?: string;

  @IsOptional()
  @IsISO8601({}, { message: 'until must be an ISO 8601 date-time' })
  until?: string;

  @IsOptional()
  @Transform(queryInteger)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(BOT_CALLS_MAX_LIMIT)
  limit?: number;

  /** The `next_cursor` of the previous page: the id of its last (oldest) call. */
  @IsOptional()
  @Matches(/^\d{1,18}$/, { message: 'cursor must be a next_cursor value from a previous page' })
  cursor?: string;
}
