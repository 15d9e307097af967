import 'reflect-metadata';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform, Type, type TransformFnParams } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  registerDecorator,
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { COMPANY_QUEUE } from './event-message.constants';
import {
  changesMapProblems,
  chatContentProblems,
  customFieldMapProblems,
  isDurationSeconds,
  isIntegerArray,
  isScalarOrNull,
  isSeedTimestamp,
  isSeedZonedTimestamp,
  isStringArray,
  stringMapProblems,
  type KeyedProblem,
} from './seed-formats.validator';
import { isPlainObject } from '../plain-object';

/**
 * How a listed field may be absent:
 * - `required`: must be present (an identifying field);
 * - `optional`: may be absent, but `null` is a type error;
 * - `nullable`: may be absent or `null` (only where the seed shows `null`).
 * class-validator's own `@IsOptional()` lets `null` through, which is wrong for most seed fields.
 */
export type Presence = 'required' | 'optional' | 'nullable';

/** Constraint names that say a field is missing; when one fails, its type problems are noise. */
export const PRESENCE_CONSTRAINTS: ReadonlySet<string> = new Set(['isRequired', 'exactlyOneOf']);

/**
 * Constraints that check a map field key by key: the problem list names the failing keys, so that
 * the flattener can report `changes.level` instead of one vague problem on `changes`.
 */
export const KEYED_CONSTRAINTS: ReadonlyMap<string, (value: unknown) => KeyedProblem[]> = new Map([
  ['isChangesMap', changesMapProblems],
  ['isCustomFieldMap', customFieldMapProblems],
  ['isStringMap', stringMapProblems],
]);

type Message = string | ((args: ValidationArguments) => string);

function compose(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, propertyKey) => {
    for (const decorator of decorators) decorator(target, propertyKey);
  };
}

/** A custom constraint from a plain predicate; `name` becomes the key in ValidationError.constraints. */
function check(name: string, test: (value: unknown, args: ValidationArguments) => boolean, message: Message): PropertyDecorator {
  return (target, propertyKey) => {
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyKey),
      options: { message },
      validator: { validate: (value: unknown, args?: ValidationArguments) => test(value, args as ValidationArguments) },
    });
  };
}

function keyedCheck(name: string): PropertyDecorator {
  const problems = KEYED_CONSTRAINTS.get(name);
  if (!problems) throw new Error(`no keyed constraint named ${name}`);
  return check(
    name,
    (value) => problems(value).length === 0,
    ({ value }) => problems(value)[0]?.problem ?? 'is invalid',
  );
}

function presence(kind: Presence): PropertyDecorator {
  switch (kind) {
    case 'required':
      // Only absence: a present `null` falls to the type check, whose message is more telling.
      return check('isRequired', (value) => value !== undefined, 'is required');
    case 'optional':
      return ValidateIf((_object: unknown, value: unknown) => value !== undefined);
    case 'nullable':
      return ValidateIf((_object: unknown, value: unknown) => value !== undefined && value !== null);
  }
}

/**
 * The field's schema in the API documentation (the callback and ingest message bodies), declared beside
 * the rule that checks it so the two cannot drift apart. Only metadata: validation does not read it.
 */
function documented(kind: Presence, schema: ApiPropertyOptions): PropertyDecorator {
  return ApiProperty({ ...schema, required: kind === 'required', ...(kind === 'nullable' ? { nullable: true } : {}) } as ApiPropertyOptions);
}

/** A listed field: how it may be absent, the rule its value must pass, and its documented schema. */
function field(kind: Presence, rule: PropertyDecorator, schema: ApiPropertyOptions): PropertyDecorator {
  return compose(presence(kind), rule, documented(kind, schema));
}

const SEED_TIMESTAMP = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', example: '2024-05-01 12:30:00' } as const;

function expected(what: string, kind: Presence): string {
  return kind === 'nullable' ? `must be ${what} or null` : `must be ${what}`;
}

export function IntegerField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsInt({ message: expected('an integer', kind) }), { type: 'integer' });
}

export function NumberField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsNumber({ allowNaN: false, allowInfinity: false }, { message: expected('a number', kind) }), { type: 'number' });
}

export function StringField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsString({ message: expected('a string', kind) }), { type: 'string' });
}

export function BooleanField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsBoolean({ message: expected('a boolean', kind) }), { type: 'boolean' });
}

/** A free-form object (e.g. the close entry's customer_custom_fields, typed only as "object"). */
export function ObjectField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsObject({ message: expected('an object', kind) }), { type: 'object', additionalProperties: true });
}

export function StringArrayField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, check('isStringArray', isStringArray, expected('an array of strings', kind)), { type: 'string', isArray: true });
}

export function IntegerArrayField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, check('isIntegerArray', isIntegerArray, expected('an array of integers', kind)), { type: 'integer', isArray: true });
}

/** `allowEmpty` is for send_status, which the seed says may be empty. */
export function OneOfField(values: readonly string[], kind: Presence = 'optional', options: { allowEmpty?: boolean } = {}): PropertyDecorator {
  const allowed = options.allowEmpty ? [...values, ''] : [...values];
  const message = `must be one of ${values.join(', ')}${options.allowEmpty ? ' or an empty string' : ''}`;
  return field(kind, IsIn(allowed, { message }), { type: 'string', enum: allowed });
}

export function IsSeedTimestamp(): PropertyDecorator {
  return check('isSeedTimestamp', isSeedTimestamp, 'must be a timestamp YYYY-MM-DD HH:MM:SS');
}

export function TimestampField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsSeedTimestamp(), SEED_TIMESTAMP);
}

export function ZonedTimestampField(kind: Presence = 'optional'): PropertyDecorator {
  return field(
    kind,
    check('isSeedZonedTimestamp', isSeedZonedTimestamp, 'must be a timestamp YYYY-MM-DD HH:MM:SS +ZZZZ'),
    { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} [+-]\\d{4}$', example: '2024-05-01 12:30:00 +0800' },
  );
}

export function DurationSecondsField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, check('isDurationSeconds', isDurationSeconds, 'must be a duration in seconds like 90s'), { type: 'string', pattern: '^\\d+s$', example: '90s' });
}

/** The close entry's queue_seconds: an integer, or a string when the customer was not queued. */
export function IntegerOrStringField(kind: Presence = 'optional'): PropertyDecorator {
  return field(
    kind,
    check('isIntegerOrString', (value) => Number.isInteger(value) || typeof value === 'string', 'must be an integer or a string'),
    { oneOf: [{ type: 'integer' }, { type: 'string' }] },
  );
}

/** "null or scalar" in the seed: present `null` is a normal value here, so only absence is skipped. */
export function ScalarOrNullField(): PropertyDecorator {
  return field(
    'optional',
    check('isScalarOrNull', isScalarOrNull, 'must be null, a string, a number or a boolean'),
    { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] },
  );
}

export function IsCustomFieldMap(): PropertyDecorator {
  return keyedCheck('isCustomFieldMap');
}

export function CustomFieldMapField(kind: Presence = 'optional'): PropertyDecorator {
  return field(
    kind,
    IsCustomFieldMap(),
    {
      type: 'object',
      description: 'Custom fields: keys `SelectField_<n>` or `TextField_<n>`, values a string or an array of strings.',
      additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    },
  );
}

export function IsChangesMap(): PropertyDecorator {
  return keyedCheck('isChangesMap');
}

export function ChangesField(kind: Presence = 'required'): PropertyDecorator {
  return field(kind, IsChangesMap(), { type: 'object', description: 'Each changed field → `[old, new]`.', additionalProperties: { type: 'array', minItems: 2, maxItems: 2 } });
}

export function StringMapField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, keyedCheck('isStringMap'), { type: 'object', additionalProperties: { type: 'string' } });
}

export function IsJsonObjectString(): PropertyDecorator {
  return check(
    'isJsonObjectString',
    (value) => chatContentProblems(value).length === 0,
    ({ value }) => chatContentProblems(value).join('; '),
  );
}

export function JsonObjectStringField(kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, IsJsonObjectString(), { type: 'string', description: 'A JSON object, as text.' });
}

/**
 * `@ValidateNested` reports a primitive element but walks into an element that is itself an array,
 * which would let `[[{...}]]` pass. In the copy being validated (never the message), every element
 * that is not an object becomes `null`, which it does report.
 */
function NonObjectElementsAsNull(): PropertyDecorator {
  return Transform(({ value, obj, key }: TransformFnParams): unknown => {
    const source = (obj as Record<string, unknown>)[key];
    if (!Array.isArray(value) || !Array.isArray(source)) return value;
    return value.map((element: unknown, index) => (isPlainObject(source[index]) ? element : null));
  });
}

/** The entry class of each nested field, by class and property: what `@Type` tells class-transformer, for the compiled check. */
export const NESTED_ENTRY_CLASSES: ReadonlyMap<object, ReadonlyMap<string, () => new () => object>> = new Map();

function NestedEntry(entry: () => new () => object): PropertyDecorator {
  return (target, propertyKey) => {
    const registry = NESTED_ENTRY_CLASSES as Map<object, Map<string, () => new () => object>>;
    const byProperty = registry.get(target.constructor) ?? new Map<string, () => new () => object>();
    byProperty.set(String(propertyKey), entry);
    registry.set(target.constructor, byProperty);
  };
}

/** An array of nested entries; `@Type` makes class-transformer build the instances whose rules apply. */
export function NestedArrayField(entry: () => new () => object, kind: Presence = 'optional'): PropertyDecorator {
  return field(
    kind,
    compose(IsArray({ message: expected('an array', kind) }), ValidateNested({ each: true, message: 'must be an object' }), Type(entry), NestedEntry(entry), NonObjectElementsAsNull()),
    { type: () => [entry()] },
  );
}

export function NestedObjectField(entry: () => new () => object, kind: Presence = 'optional'): PropertyDecorator {
  return field(kind, compose(IsObject({ message: expected('an object', kind) }), ValidateNested({ message: 'must be an object' }), Type(entry), NestedEntry(entry)), {
    type: () => entry(),
  });
}

/** ShutQueue_create: with queue_type `company`, queue_name and queue_id carry the literal `company`. */
export function CompanyQueueValue(): PropertyDecorator {
  return check(
    'isCompanyQueueValue',
    (value, { object }) => (object as { queue_type?: unknown }).queue_type !== 'company' || value === COMPANY_QUEUE,
    `must be ${COMPANY_QUEUE} when queue_type is ${COMPANY_QUEUE}`,
  );
}

/**
 * Exactly one of `group` must be present (AgentNote_update: sub_session_id for IM, conversation_id
 * for CC). Replaces the presence rule on each member: a present member is type-checked as usual;
 * "none present" is reported once, on the first member, and "several present" on each later one.
 */
export function ExactlyOneOf(group: readonly string[]): PropertyDecorator {
  const names = group.join(', ');
  const presentIn = (object: object) => group.filter((name) => (object as Record<string, unknown>)[name] !== undefined);
  return (target, propertyKey) => {
    const self = String(propertyKey);
    const isFirst = group[0] === self;
    ValidateIf((object: object, value: unknown) => value !== undefined || (isFirst && presentIn(object).length === 0))(target, propertyKey);
    ApiProperty({ required: false, description: `Exactly one of ${names} is present.` })(target, propertyKey);
    check(
      'exactlyOneOf',
      (_value, { object }) => {
        const present = presentIn(object);
        return present.length === 1 || (present.length > 1 && present[0] === self);
      },
      ({ object }) => {
        const present = presentIn(object);
        return present.length === 0 ? `exactly one of ${names} is required` : `must not be sent together with ${present[0]} (exactly one of ${names})`;
      },
    )(target, propertyKey);
  };
}
