import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsOptional, ValidateBy, type ValidationOptions } from 'class-validator';
import { parseTimestamp } from '@app/persistence';

/** How since/until are read (documentation). */
export const TIMESTAMP_TEXT = 'an ISO 8601 date-time or date; a time without offset is UTC, e.g. `2026-01-31T12:00:00Z`.';

export function IsTimestamp(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTimestamp',
      validator: {
        validate: (value: unknown) => parseTimestamp(value) !== null,
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an ISO-8601 timestamp such as 2025-01-31T12:00:00Z`,
      },
    },
    options,
  );
}

/** An optional `since`/`until` filter, documented with `options`: anything but a timestamp is refused naming it. */
export function TimestampFilter(options: ApiPropertyOptions): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional(options), IsOptional(), IsTimestamp());
}
