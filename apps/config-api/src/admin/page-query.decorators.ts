import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsRecordId, MAX_RECORD_ID, queryInteger } from '@app/payloads';

/** `limit` of a paged admin list: an integer from 1 to `max` read from the query string. */
export function PageLimit(max: number, defaultSize: number): PropertyDecorator {
  const message = `limit must be an integer from 1 to ${max}`;
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: max, default: defaultSize }),
    IsOptional(),
    Transform(queryInteger),
    IsInt({ message }),
    Min(1, { message }),
    Max(max, { message }),
  );
}

/** `cursor` of a paged admin list: the opaque `next_cursor` of the previous page. */
export function PageCursor(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ maxLength: 64, description: 'The `next_cursor` of the previous page.' }),
    IsOptional(),
    IsString({ message: 'cursor must be a string' }),
    MaxLength(64, { message: 'cursor must be a next_cursor value returned by this API' }),
  );
}

/** An optional `account_id` filter: a record id, converted from text when it comes in the query string. */
export function AccountIdFilter(fromQuery = true): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID }), IsOptional(), IsRecordId({ fromQuery }));
}
