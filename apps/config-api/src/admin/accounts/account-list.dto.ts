import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { PageCursor, PageLimit } from '../page-query.decorators';

export const DEFAULT_ACCOUNT_PAGE = 50;
export const MAX_ACCOUNT_PAGE = 200;

export class ListAccountsQueryDto {
  /** The id exactly, or a part of the email or name (any letter case). */
  @ApiPropertyOptional({ maxLength: 320, description: 'The id exactly, or a part of the email or name (any letter case).' })
  @IsOptional()
  @IsString({ message: 'search must be a string' })
  @MaxLength(320, { message: 'search must be at most 320 characters' })
  search?: string;

  @PageLimit(MAX_ACCOUNT_PAGE, DEFAULT_ACCOUNT_PAGE)
  limit?: number;

  @PageCursor()
  cursor?: string;
}
