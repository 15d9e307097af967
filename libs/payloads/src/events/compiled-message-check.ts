import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { NESTED_ENTRY_CLASSES } from './field.decorators';

/**
 * A yes-or-"ask class-validator" check of a message, compiled once per DTO class from the very
 * class-validator metadata the decorators registered: the same ValidateIf conditions and the same
 * constraint functions with the same arguments, called on the message itself.
 *
 * validateSync needs class-transformer's deep copy of the message first, and then walks its own
 * executor; profiles put the two at an eighth of ingest's CPU per event. Here a message for which every
 * constraint holds is known valid without copying; anything else (a failed constraint, a shape the
 * compiler does not model) answers false, and the caller asks class-validator, which then produces every
 * problem exactly as before. So `true` must imply "validateSync finds nothing", which the spec beside
 * this file checks on every sample and many broken variants of them.
 *
 * What the copy would change, the caller rules out first (plainTreeUnchanged): only plain objects and
 * arrays, no key naming something on Object.prototype. The only class-transformer decorators on these
 * DTOs are the nested fields' `@Type` (whose entry classes field.decorators also records) and their
 * NonObjectElementsAsNull, whose effect (an error on an element that is not an object) is answered
 * false here.
 */

interface Constraint {
  metadata: ValidationMetadata;
  validate(value: unknown, args: ValidationArguments): unknown;
}

interface PropertyPlan {
  name: string;
  conditions: ((object: object, value: unknown) => boolean)[];
  constraints: Constraint[];
  /** The entry class's plan for a nested field (built on first use: entries may refer back). */
  nested: (() => ClassPlan | null) | null;
}

interface ClassPlan {
  className: string;
  properties: PropertyPlan[];
}

const SUPPORTED_TYPES: ReadonlySet<string> = new Set([ValidationTypes.CUSTOM_VALIDATION, ValidationTypes.CONDITIONAL_VALIDATION, ValidationTypes.NESTED_VALIDATION]);
const plans = new Map<new () => object, ClassPlan | null>();

function planOf(target: new () => object): ClassPlan | null {
  if (!plans.has(target)) plans.set(target, compile(target));
  return plans.get(target) ?? null;
}

/** The plan, or null when the class uses something this check does not model (it then always defers). */
function compile(target: new () => object): ClassPlan | null {
  const storage = getMetadataStorage();
  // The same selection validateSync makes with no groups: (constructor, schema, always, strictGroups).
  const metadatas = storage.getTargetValidationMetadatas(target, '', false, false);
  if (metadatas.length === 0) return null; // forbidUnknownValues would refuse it
  const properties = new Map<string, PropertyPlan>();
  for (const metadata of metadatas) {
    if (!SUPPORTED_TYPES.has(metadata.type) || metadata.always || (metadata.groups?.length ?? 0) > 0) return null;
    const plan = properties.get(metadata.propertyName) ?? { name: metadata.propertyName, conditions: [], constraints: [], nested: null };
    properties.set(metadata.propertyName, plan);
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      plan.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
    } else if (metadata.type === ValidationTypes.NESTED_VALIDATION) {
      const entry = NESTED_ENTRY_CLASSES.get(target)?.get(metadata.propertyName);
      if (!entry || plan.nested) return null;
      plan.nested = () => planOf(entry());
    } else {
      if (metadata.each || !metadata.constraintCls) return null;
      for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
        if (constraint.async) return null;
        const instance = constraint.instance as { validate(value: unknown, args: ValidationArguments): unknown };
        plan.constraints.push({ metadata, validate: (value, args) => instance.validate(value, args) });
      }
    }
  }
  return { className: target.name, properties: [...properties.values()] };
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function holds(plan: ClassPlan, object: Record<string, unknown>): boolean {
  for (const property of plan.properties) {
    const value = object[property.name];
    let applies = true;
    for (const condition of property.conditions) applies = condition(object, value) && applies;
    if (!applies) continue;
    for (const { metadata, validate } of property.constraints) {
      const args: ValidationArguments = { targetName: plan.className, property: property.name, object, value, constraints: metadata.constraints as unknown[] };
      const result = validate(value, args);
      if (!result || result instanceof Promise) return false;
    }
    if (property.nested && value !== undefined && !nestedHolds(property.nested(), value)) return false;
  }
  return true;
}

/** class-validator walks an array's elements (each must be an object of the entry class) or the object itself. */
function nestedHolds(plan: ClassPlan | null, value: unknown): boolean {
  if (!plan) return false;
  if (Array.isArray(value)) return value.every((element) => isPlainRecord(element) && holds(plan, element));
  return isPlainRecord(value) && holds(plan, value);
}

/** True only when class-validator would find no problem in `message` as an instance of `messageClass`. */
export function passesCompiledCheck(messageClass: new () => object, message: Record<string, unknown>): boolean {
  const plan = planOf(messageClass);
  return plan !== null && holds(plan, message);
}

/**
 * Whether class-transformer's copy of `value` would equal `value`: only plain objects and arrays, and
 * no key naming something on Object.prototype (`__proto__`, `constructor`, `toString`…), which the copy skips.
 */
export function plainTreeUnchanged(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const element of current) pending.push(element);
      continue;
    }
    if (Object.getPrototypeOf(current) !== Object.prototype) return false;
    for (const key of Object.keys(current)) {
      if (key in Object.prototype) return false;
      pending.push((current as Record<string, unknown>)[key]);
    }
  }
  return true;
}
