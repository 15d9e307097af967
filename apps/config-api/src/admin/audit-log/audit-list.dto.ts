import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AccountIdFilter, PageCursor, PageLimit } from '../page-query.decorators';
import { TIMESTAMP_TEXT, TimestampFilter } from '../timestamp';

export const AUDIT_MAX_LIMIT = 500;
export const AUDIT_DEFAULT_LIMIT = 50;

/** GET /admin/v1/audit's filters (CONTRACT §15); each bad one answers 400 naming it. */
export class ListAuditQueryDto {
  @TimestampFilter({ format: 'date-time', description: `Entries at or after: ${TIMESTAMP_TEXT}` })
  since?: string;

  @TimestampFilter({ format: 'date-time', description: `Entries before: ${TIMESTAMP_TEXT}` })
  until?: string;

  @ApiPropertyOptional({ maxLength: 320, description: 'Exactly this actor: a token\'s name, a user\'s email (or subject), or `account:<id>`.' })
  @IsOptional()
  @IsString({ message: 'actor must be a string' })
  @MaxLength(320, { message: 'actor must be at most 320 characters' })
  actor?: string;

  @ApiPropertyOptional({ maxLength: 64, description: 'Exactly this action, e.g. `account.create` or `signin.refused`.' })
  @IsOptional()
  @Matches(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, { message: 'action must be a dotted word such as account.create' })
  @MaxLength(64, { message: 'action must be at most 64 characters' })
  action?: string;

  @AccountIdFilter()
  account_id?: number;

  @PageLimit(AUDIT_MAX_LIMIT, AUDIT_DEFAULT_LIMIT)
  limit?: number;

  @PageCursor()
  cursor?: string;
}
