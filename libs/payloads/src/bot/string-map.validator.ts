import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { isPlainObject } from '../plain-object';

/** `.name` for identifier-like keys, `["odd key"]` otherwise, so a reported path can be read back unambiguously. */
export function keyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function firstNonStringKey(value: Record<string, unknown>): string | null {
  for (const [key, entry] of Object.entries(value)) if (typeof entry !== 'string') return key;
  return null;
}

/**
 * The seed's "map of string to string" (`variables`): a JSON object whose every value is a string.
 * The message names the first offending key, e.g. `variables.city must be a string`.
 */
export function IsStringMap(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isStringMap',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => isPlainObject(value) && firstNonStringKey(value) === null,
        defaultMessage: (args?: ValidationArguments) => {
          const value: unknown = args?.value;
          if (!isPlainObject(value)) return '$property must be an object mapping names to strings';
          return `$property${keyPath(firstNonStringKey(value) ?? '')} must be a string`;
        },
      },
    });
  };
}

export type FieldKind = 'string' | 'integer';

/**
 * An open object (the seed's "custom additional object"): unknown keys are kept, while the keys the
 * seed lists must have their documented type when present (null counts as absent).
 */
export function HasTypedFields(fields: Readonly<Record<string, FieldKind>>, options?: ValidationOptions): PropertyDecorator {
  const problemOf = (value: unknown): string | null => {
    if (!isPlainObject(value)) return '$property must be an object';
    for (const [name, kind] of Object.entries(fields)) {
      const entry = value[name];
      if (entry === undefined || entry === null) continue;
      if (kind === 'string' && typeof entry !== 'string') return `$property.${name} must be a string`;
      if (kind === 'integer' && !Number.isInteger(entry)) return `$property.${name} must be an integer`;
    }
    return null;
  };
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'hasTypedFields',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => problemOf(value) === null,
        defaultMessage: (args?: ValidationArguments) => problemOf(args?.value) ?? '$property is invalid',
      },
    });
  };
}
