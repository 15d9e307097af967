import { $and, $eq, $exists, $gt, $gte, $in, $lt, $lte, $ne, $nin, $or, createQueryTester } from 'sift';

/*
 * A destination's `filter` (CONTRACT §11): a MongoDB-style query on the event's message, limited to
 * comparison, membership and existence operators joined by $and/$or. The check refuses everything else
 * by name before anything is stored, and the matcher compiles with only these operators, so a filter
 * that somehow skipped the check still could not run code ($where) or a regex.
 */

/** A stored filter: what validateDestinationFilter accepted. */
export type DestinationFilter = Record<string, unknown>;

export const FILTER_FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'] as const;
export const FILTER_GROUP_OPERATORS = ['$and', '$or'] as const;

/** The serialized filter at most (it is kept with the destination and read by ingest for every event). */
export const FILTER_MAX_BYTES = 8192;
/** Conditions at most (a condition is one dotted path with its value or operator object), CONTRACT §11. */
export const FILTER_MAX_CONDITIONS = 50;
/** $and/$or groups nested in one another at most, CONTRACT §11. */
export const FILTER_MAX_GROUP_DEPTH = 4;
/** Values in one $in/$nin list at most, CONTRACT §11. */
export const FILTER_MAX_LIST_VALUES = 100;
/** Nesting of a literal value (arrays and objects compared for equality) at most. */
export const FILTER_MAX_LITERAL_DEPTH = 8;
export const FILTER_MAX_PATH_LENGTH = 256;
/**
 * Steps one filter may take on one message (a step: one value visited on a path or one comparison).
 * The bounds above keep a filter small, but a message with long arrays multiplies the work; past this
 * budget the filter takes nothing rather than stalling ingest's loop (about a millisecond of work).
 */
export const FILTER_MAX_WORK_PER_EVENT = 20_000;

const COMPARISON_OPERATORS = new Set<string>(['$gt', '$gte', '$lt', '$lte']);
const LIST_OPERATORS = new Set<string>(['$in', '$nin']);
const FIELD_OPERATORS = new Set<string>(FILTER_FIELD_OPERATORS);
/** Path segments that would walk into prototypes rather than the message's own data. */
const UNSAFE_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

class FilterProblem extends Error {}

/** Keys and paths are cut in messages so an absurd one cannot blow up the answer. */
function shown(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

interface Budget {
  conditions: number;
}

function countCondition(budget: Budget): void {
  budget.conditions += 1;
  if (budget.conditions > FILTER_MAX_CONDITIONS) throw new FilterProblem(`filter: more than ${FILTER_MAX_CONDITIONS} conditions`);
}

/** A value compared for equality: JSON scalars, arrays of values and objects without operator keys. */
function checkLiteral(value: unknown, where: string, depth: number): void {
  if (depth > FILTER_MAX_LITERAL_DEPTH) throw new FilterProblem(`filter: ${where} is nested deeper than ${FILTER_MAX_LITERAL_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FilterProblem(`filter: ${where} must be a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) checkLiteral(item, where, depth + 1);
    return;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.startsWith('$')) throw new FilterProblem(`filter: operator ${shown(key)} is not allowed`);
      checkLiteral(item, where, depth + 1);
    }
    return;
  }
  throw new FilterProblem(`filter: ${where} must be a JSON value`);
}

function checkOperator(operator: string, operand: unknown, path: string): void {
  const where = `${operator} of "${shown(path)}"`;
  if (!FIELD_OPERATORS.has(operator)) throw new FilterProblem(`filter: operator ${shown(operator)} is not allowed`);
  if (operator === '$exists') {
    if (typeof operand !== 'boolean') throw new FilterProblem(`filter: ${where} must be true or false`);
    return;
  }
  if (COMPARISON_OPERATORS.has(operator)) {
    if (!(typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand)))) {
      throw new FilterProblem(`filter: ${where} must be a number or a string`);
    }
    return;
  }
  if (LIST_OPERATORS.has(operator)) {
    if (!Array.isArray(operand)) throw new FilterProblem(`filter: ${where} must be an array of values`);
    if (operand.length > FILTER_MAX_LIST_VALUES) throw new FilterProblem(`filter: ${where} has more than ${FILTER_MAX_LIST_VALUES} values`);
    for (const item of operand) checkLiteral(item, where, 1);
    return;
  }
  checkLiteral(operand, where, 0);
}

function checkPath(path: string): void {
  if (path.length === 0) throw new FilterProblem('filter: a field path must not be empty');
  if (path.length > FILTER_MAX_PATH_LENGTH) throw new FilterProblem(`filter: the path "${shown(path)}" is longer than ${FILTER_MAX_PATH_LENGTH} characters`);
  for (const segment of path.split('.')) {
    if (segment.length === 0) throw new FilterProblem(`filter: the path "${shown(path)}" has an empty segment`);
    if (segment.startsWith('$')) throw new FilterProblem(`filter: operator ${shown(segment)} is not allowed`);
    if (UNSAFE_SEGMENTS.has(segment)) throw new FilterProblem(`filter: the path "${shown(path)}" is not allowed`);
  }
}

/** What a path is held to: an operator object (every key an operator) or a value to equal. */
function checkCondition(path: string, condition: unknown, budget: Budget): void {
  countCondition(budget);
  if (isPlainObject(condition)) {
    const keys = Object.keys(condition);
    const operators = keys.filter((key) => key.startsWith('$'));
    if (operators.length > 0) {
      if (operators.length !== keys.length) {
        throw new FilterProblem(`filter: "${shown(path)}" mixes operators and fields; use {"$eq": {…}} to compare to an object`);
      }
      for (const operator of operators) checkOperator(operator, condition[operator], path);
      return;
    }
  }
  checkLiteral(condition, `the value of "${shown(path)}"`, 0);
}

/** `groups`: how many $and/$or this query sits in. */
function checkQuery(query: unknown, where: string, groups: number, budget: Budget): void {
  if (!isPlainObject(query)) throw new FilterProblem(`filter: ${where} must be an object`);
  for (const [key, value] of Object.entries(query)) {
    if (key === '$and' || key === '$or') {
      if (groups + 1 > FILTER_MAX_GROUP_DEPTH) throw new FilterProblem(`filter: ${key} nested more than ${FILTER_MAX_GROUP_DEPTH} levels of $and/$or`);
      if (!Array.isArray(value) || value.length === 0) throw new FilterProblem(`filter: ${key} must be a non-empty array of filters`);
      for (const member of value) checkQuery(member, `each member of ${key}`, groups + 1, budget);
    } else if (key.startsWith('$')) {
      throw new FilterProblem(`filter: operator ${shown(key)} is not allowed`);
    } else {
      checkPath(key);
      checkCondition(key, value, budget);
    }
  }
}

/**
 * Null when `value` is an acceptable filter (null included: every message); otherwise one problem,
 * led by `filter` and naming the operator or path at fault.
 */
export function validateDestinationFilter(value: unknown): string | null {
  if (value === null) return null;
  if (!isPlainObject(value)) return 'filter: must be an object (a query on the message) or null';
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(value), 'utf8');
  } catch {
    return 'filter: must be plain JSON';
  }
  if (size > FILTER_MAX_BYTES) return `filter: larger than ${FILTER_MAX_BYTES} bytes`;
  try {
    checkQuery(value, 'the filter', 0, { conditions: 0 });
    return null;
  } catch (problem) {
    if (problem instanceof FilterProblem) return problem.message;
    throw problem;
  }
}

type Tester = (message: unknown) => boolean;

class WorkExceeded extends Error {}

/*
 * The work left for the match running now. Matching is synchronous, so one counter serves every
 * filter: each match sets it before running and each step spends from it.
 */
let workLeft = FILTER_MAX_WORK_PER_EVENT;

function spendWork(): void {
  workLeft -= 1;
  if (workLeft < 0) throw new WorkExceeded();
}

/** The shape of sift's operation creators (its typings do not export the type). */
interface SiftOperation {
  next(...args: unknown[]): unknown;
}
type OperationCreator = (params: unknown, ownerQuery: unknown, options: Parameters<typeof $eq>[2], name: string) => SiftOperation;

/** Counts one step each time an operation looks at a value (every value a path reaches, array items included). */
function counted(creator: OperationCreator): OperationCreator {
  return (params, ownerQuery, options, name) => {
    const operation = creator(params, ownerQuery, options, name);
    const next = operation.next.bind(operation);
    operation.next = (...args: unknown[]) => {
      spendWork();
      return next(...args);
    };
    return operation;
  };
}

/** Every equality test ($eq, $in's values, a literal) is one step too. */
function countedEquals(a: unknown, b: unknown): boolean {
  spendWork();
  return isDeepStrictJsonEqual(a, b);
}

/** sift's own equality for JSON values (the only values a filter or a message holds): null equals a missing value. */
function isDeepStrictJsonEqual(a: unknown, b: unknown): boolean {
  if (a === b || (a == null && b == null)) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, index) => isDeepStrictJsonEqual(item, b[index]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && isDeepStrictJsonEqual(a[key], b[key]));
  }
  return false;
}

/** Only the operators the check lets through: anything else cannot compile, let alone run. */
type SiftOperations = NonNullable<Parameters<typeof createQueryTester>[1]>['operations'];
const ALLOWED_OPERATIONS = Object.fromEntries(
  Object.entries({ $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $and, $or }).map(([name, creator]) => [name, counted(creator as unknown as OperationCreator)]),
) as unknown as SiftOperations;

const compiled = new WeakMap<object, Tester>();

/** A tester for one filter, kept while the filter object lives (ingest keeps the account's list cached). */
export function compileDestinationFilter(filter: DestinationFilter): Tester {
  let tester = compiled.get(filter);
  if (!tester) {
    const test = createQueryTester(filter, { operations: ALLOWED_OPERATIONS, compare: countedEquals });
    tester = (message) => test(message);
    compiled.set(filter, tester);
  }
  return tester;
}

/**
 * Whether `message` is taken by a destination with this filter (null: every message). A filter that
 * fails to compile or to run, or outspends FILTER_MAX_WORK_PER_EVENT on this message, takes nothing
 * rather than throwing or stalling in the middle of an ingest.
 */
export function matchesDestinationFilter(filter: DestinationFilter | null | undefined, message: unknown): boolean {
  if (filter === null || filter === undefined) return true;
  workLeft = FILTER_MAX_WORK_PER_EVENT;
  try {
    return compileDestinationFilter(filter)(message);
  } catch {
    return false;
  } finally {
    workLeft = FILTER_MAX_WORK_PER_EVENT;
  }
}
