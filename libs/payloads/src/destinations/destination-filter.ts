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
/** Nesting of $and/$or groups and literal values at most, so a match is bounded however it is written. */
export const FILTER_MAX_DEPTH = 8;
/** Conditions, group members and $in/$nin values counted together at most. */
export const FILTER_MAX_NODES = 256;
export const FILTER_MAX_PATH_LENGTH = 256;

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
  nodes: number;
}

function spend(budget: Budget): void {
  budget.nodes += 1;
  if (budget.nodes > FILTER_MAX_NODES) throw new FilterProblem(`filter: more than ${FILTER_MAX_NODES} conditions and values`);
}

function checkDepth(depth: number): void {
  if (depth > FILTER_MAX_DEPTH) throw new FilterProblem(`filter: nested deeper than ${FILTER_MAX_DEPTH} levels`);
}

/** A value compared for equality: JSON scalars, arrays of values and objects without operator keys. */
function checkLiteral(value: unknown, where: string, depth: number, budget: Budget): void {
  checkDepth(depth);
  spend(budget);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FilterProblem(`filter: ${where} must be a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) checkLiteral(item, where, depth + 1, budget);
    return;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.startsWith('$')) throw new FilterProblem(`filter: operator ${shown(key)} is not allowed`);
      checkLiteral(item, where, depth + 1, budget);
    }
    return;
  }
  throw new FilterProblem(`filter: ${where} must be a JSON value`);
}

function checkOperator(operator: string, operand: unknown, path: string, depth: number, budget: Budget): void {
  const where = `${operator} of "${shown(path)}"`;
  if (!FIELD_OPERATORS.has(operator)) throw new FilterProblem(`filter: operator ${shown(operator)} is not allowed`);
  if (operator === '$exists') {
    if (typeof operand !== 'boolean') throw new FilterProblem(`filter: ${where} must be true or false`);
    spend(budget);
    return;
  }
  if (COMPARISON_OPERATORS.has(operator)) {
    if (!(typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand)))) {
      throw new FilterProblem(`filter: ${where} must be a number or a string`);
    }
    spend(budget);
    return;
  }
  if (LIST_OPERATORS.has(operator)) {
    if (!Array.isArray(operand)) throw new FilterProblem(`filter: ${where} must be an array of values`);
    spend(budget);
    for (const item of operand) checkLiteral(item, where, depth + 1, budget);
    return;
  }
  checkLiteral(operand, where, depth + 1, budget);
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
function checkCondition(path: string, condition: unknown, depth: number, budget: Budget): void {
  if (isPlainObject(condition)) {
    const keys = Object.keys(condition);
    const operators = keys.filter((key) => key.startsWith('$'));
    if (operators.length > 0) {
      if (operators.length !== keys.length) {
        throw new FilterProblem(`filter: "${shown(path)}" mixes operators and fields; use {"$eq": {…}} to compare to an object`);
      }
      for (const operator of operators) checkOperator(operator, condition[operator], path, depth, budget);
      return;
    }
  }
  checkLiteral(condition, `the value of "${shown(path)}"`, depth, budget);
}

function checkQuery(query: unknown, where: string, depth: number, budget: Budget): void {
  checkDepth(depth);
  if (!isPlainObject(query)) throw new FilterProblem(`filter: ${where} must be an object`);
  for (const [key, value] of Object.entries(query)) {
    spend(budget);
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) throw new FilterProblem(`filter: ${key} must be a non-empty array of filters`);
      for (const member of value) checkQuery(member, `each member of ${key}`, depth + 1, budget);
    } else if (key.startsWith('$')) {
      throw new FilterProblem(`filter: operator ${shown(key)} is not allowed`);
    } else {
      checkPath(key);
      checkCondition(key, value, depth + 1, budget);
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
    checkQuery(value, 'the filter', 0, { nodes: 0 });
    return null;
  } catch (problem) {
    if (problem instanceof FilterProblem) return problem.message;
    throw problem;
  }
}

type Tester = (message: unknown) => boolean;

/** Only the operators the check lets through: anything else cannot compile, let alone run. */
const ALLOWED_OPERATIONS = { $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $and, $or };

const compiled = new WeakMap<object, Tester>();

/** A tester for one filter, kept while the filter object lives (ingest keeps the account's list cached). */
export function compileDestinationFilter(filter: DestinationFilter): Tester {
  let tester = compiled.get(filter);
  if (!tester) {
    const test = createQueryTester(filter, { operations: ALLOWED_OPERATIONS });
    tester = (message) => test(message);
    compiled.set(filter, tester);
  }
  return tester;
}

/**
 * Whether `message` is taken by a destination with this filter (null: every message). A filter that
 * fails to compile or to run takes nothing rather than throwing in the middle of an ingest.
 */
export function matchesDestinationFilter(filter: DestinationFilter | null | undefined, message: unknown): boolean {
  if (filter === null || filter === undefined) return true;
  try {
    return compileDestinationFilter(filter)(message);
  } catch {
    return false;
  }
}
