import { Transform, type TransformFnParams } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** Account and other record ids are PostgreSQL `integer` columns: anything larger must be refused before a query fails on it. */
export const MAX_RECORD_ID = 2_147_483_647;

/** Query strings arrive as text and implicit conversion is off: plain digits become a number, anything else stays as sent and fails IsInt. */
export function queryInteger({ value }: TransformFnParams): unknown {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
}

/**
 * An id field (e.g. `account_id`) that must be a positive integer fitting the id columns; with
 * `fromQuery` the text of a query parameter is converted first. Messages name the field.
 */
export function IsRecordId(options: { fromQuery?: boolean } = {}): PropertyDecorator {
  const decorators: PropertyDecorator[] = [
    IsInt({ message: '$property must be an integer' }),
    Min(1, { message: '$property must be a positive integer' }),
    Max(MAX_RECORD_ID, { message: `$property must be at most ${MAX_RECORD_ID}` }),
  ];
  if (options.fromQuery) decorators.unshift(Transform(queryInteger));
  return (target, propertyKey) => {
    for (const decorator of decorators) decorator(target, propertyKey);
  };
}
