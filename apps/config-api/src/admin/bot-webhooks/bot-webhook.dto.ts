import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES, type BotCallOutcome, type BotWebhookType } from '@app/persistence';
import { queryInteger } from '@app/payloads';
import { TimestampFilter } from '../timestamp';
import { AccountIdFilter } from '../page-query.decorators';

export const BOT_TIMEOUT_MIN_MS = 100;
export const BOT_TIMEOUT_MAX_MS = 30_000;
export const BOT_TIMEOUT_DEFAULT_MS = 5000;

export class CreateBotWebhookDto {
  /** The seed's integrationName; it is also signed into every message-trigger call. */
  @ApiProperty({ minLength: 1, maxLength: 128, description: "The seed's integrationName, unique per account and type; signed into message-trigger calls.", example: '对接一' })
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(128)
  name!: string;

  @ApiProperty({ enum: BOT_WEBHOOK_TYPES })
  @IsIn(BOT_WEBHOOK_TYPES, { message: `type must be one of ${BOT_WEBHOOK_TYPES.join(', ')}` })
  type!: BotWebhookType;

  /** Checked further (scheme, length, private addresses) by checkTargetUrl in the service. */
  @ApiProperty({ description: 'An http(s) URL with a public host (unless ALLOW_PRIVATE_TARGETS).', example: 'https://bot.example.com/hook' })
  @IsString({ message: 'url must be a string' })
  url!: string;

  @ApiProperty({ minLength: 1, maxLength: 256, description: 'The signing key; never shown again.' })
  @IsString({ message: 'key must be a string' })
  @IsNotEmpty({ message: 'key must not be empty' })
  @MaxLength(256)
  key!: string;

  @ApiPropertyOptional({ type: 'integer', minimum: BOT_TIMEOUT_MIN_MS, maximum: BOT_TIMEOUT_MAX_MS, default: BOT_TIMEOUT_DEFAULT_MS })
  @IsOptional()
  @IsInt({ message: 'timeout_ms must be an integer' })
  @Min(BOT_TIMEOUT_MIN_MS)
  @Max(BOT_TIMEOUT_MAX_MS)
  timeout_ms?: number;
}


export const BOT_CALLS_MAX_LIMIT = 500;
export const BOT_CALLS_DEFAULT_LIMIT = 50;

export class ListBotCallsQueryDto {
  @AccountIdFilter()
  account_id?: number;

  @ApiPropertyOptional({ enum: BOT_WEBHOOK_TYPES })
  @IsOptional()
  @IsIn(BOT_WEBHOOK_TYPES, { message: `type must be one of ${BOT_WEBHOOK_TYPES.join(', ')}` })
  type?: BotWebhookType;

  @ApiPropertyOptional({ maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  integration_name?: string;

  @ApiPropertyOptional({ enum: BOT_CALL_OUTCOMES })
  @IsOptional()
  @IsIn(BOT_CALL_OUTCOMES, { message: `outcome must be one of ${BOT_CALL_OUTCOMES.join(', ')}` })
  outcome?: BotCallOutcome;

  // The events list's timestamps: ISO 8601 calendar dates and date-times only (no week or ordinal dates).
  @TimestampFilter({ format: 'date-time' })
  since?: string;

  @TimestampFilter({ format: 'date-time' })
  until?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: BOT_CALLS_MAX_LIMIT, default: BOT_CALLS_DEFAULT_LIMIT })
  @IsOptional()
  @Transform(queryInteger)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(BOT_CALLS_MAX_LIMIT)
  limit?: number;

  /** The `next_cursor` of the previous page: the id of its last (oldest) call. */
  @ApiPropertyOptional({ pattern: '^[0-9]{1,18}$', description: 'The `next_cursor` of the previous page.' })
  @IsOptional()
  @Matches(/^\d{1,18}$/, { message: 'cursor must be a next_cursor value from a previous page' })
  cursor?: string;
}
