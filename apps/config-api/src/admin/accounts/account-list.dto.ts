import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { queryInteger } from '@app/payloads';

export const DEFAULT_ACCOUNT_PAGE = 50;
export const MAX_ACCOUNT_PAGE = 200;

export class ListAccountsQueryDto {
  /** The id exactly, or a part of the email or name (any letter case). */
  @ApiPropertyOptional({ maxLength: 320, description: 'The id exactly, or a part of the email or name (any letter case).' })
  @IsOptional()
  @IsString({ message: 'search must be a string' })
  @MaxLength(320, { message: 'search must be at most 320 characters' })
  search?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_ACCOUNT_PAGE, default: DEFAULT_ACCOUNT_PAGE })
  @IsOptional()
  @Transform(queryInteger)
  @IsInt({ message: `limit must be an integer from 1 to ${MAX_ACCOUNT_PAGE}` })
  @Min(1, { message: `limit must be an integer from 1 to ${MAX_ACCOUNT_PAGE}` })
  @Max(MAX_ACCOUNT_PAGE, { message: `limit must be an integer from 1 to ${MAX_ACCOUNT_PAGE}` })
  limit?: number;

  @ApiPropertyOptional({ maxLength: 64, description: 'The `next_cursor` of the previous page.' })
  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(64, { message: 'cursor must be a next_cursor value returned by this API' })
  cursor?: string;
}
