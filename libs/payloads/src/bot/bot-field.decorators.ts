import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, ValidateIf, ValidateNested } from 'class-validator';
import { IsStringMap } from './string-map.validator';

/**
 * Composed field decorators for the bot structures, the counterpart of the event messages'
 * events/field.decorators.ts. The bot rules differ from the events' in one way: `null` counts as
 * absent (serializers such as Jackson write absent fields as null), so presence is class-validator's
 * IsDefined/IsOptional, and problems read `$property must be …`.
 *
 * - `required`: present and not null;
 * - `optional`: absent or null, else well typed;
 * - `{ when, message }`: required when `when(dto)` holds; otherwise checked only if present.
 */
export type BotPresence = 'required' | 'optional' | { when: (dto: never) => boolean; message: string };

type Schema = Omit<ApiPropertyOptions, 'required'>;

const REQUIRED = { message: '$property is required' };
const STRING = { message: '$property must be a string' };
const INTEGER = { message: '$property must be an integer' };
const ARRAY = { message: '$property must be an array' };
const EACH_OBJECT = { each: true, message: '$property must be an object' };

const present = (value: unknown): boolean => value !== undefined && value !== null;

function presence(kind: BotPresence): PropertyDecorator[] {
  if (kind === 'required') return [IsDefined(REQUIRED)];
  if (kind === 'optional') return [IsOptional()];
  const { when, message } = kind;
  // `when` is written for the DTO it sits on; class-validator hands that very object back here.
  return [ValidateIf((dto: object, value: unknown) => when(dto as never) || present(value)), IsDefined({ message })];
}

/**
 * The schema, the presence rule and the checks, in the order they read on a field (documentation
 * first). They are applied bottom-up, as stacked decorators are, so the constraints (and with them
 * the order of the problems reported for one field) come out as they would from a stack.
 */
export function BotField(kind: BotPresence, schema: Schema, ...checks: PropertyDecorator[]): PropertyDecorator {
  const documented = ApiProperty({ ...schema, required: kind === 'required' } as ApiPropertyOptions);
  const bottomUp = [documented, ...presence(kind), ...checks].reverse();
  return (target, propertyKey) => {
    for (const decorator of bottomUp) decorator(target, propertyKey);
  };
}

export function BotStringField(kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, { type: 'string', ...schema }, IsString(STRING));
}

export function BotIntegerField(kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, { type: 'integer', ...schema }, IsInt(INTEGER));
}

/** One of a few values; `message` names them with their meaning, e.g. `must be 1 (hyperlink) or 2 (reply message)`. */
export function BotOneOfField(values: readonly (string | number)[], message: string, kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, { enum: [...values], ...schema }, IsIn(values, { message: `$property ${message}` }));
}

/** An array of nested structures, each checked by its own DTO. */
export function BotListField(item: () => new () => object, kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, { type: () => [item()], ...schema }, IsArray(ARRAY), ValidateNested(EACH_OBJECT), Type(item));
}

export function BotObjectField(kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, schema, IsObject({ message: '$property must be an object' }));
}

/** The seed's "map of string to string" (`variables`). */
export function BotStringMapField(kind: BotPresence = 'optional', schema: Schema = {}): PropertyDecorator {
  return BotField(kind, { type: 'object', additionalProperties: { type: 'string' }, ...schema }, IsStringMap());
}
