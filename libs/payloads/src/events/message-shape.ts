import type { MessageProblem } from './message-problem';

/** How deep a message may nest (CONTRACT §4): the message object is level 1; objects and arrays both count. */
export const MAX_MESSAGE_DEPTH = 32;

export const TOO_DEEP_PROBLEM = `nests deeper than ${MAX_MESSAGE_DEPTH} levels (the message is level 1; objects and arrays both count)`;
export const PROTO_KEY_PROBLEM = 'the key __proto__ is not allowed';

/** At most this many problems are reported for one message: a hostile message could hold millions. */
const MAX_SHAPE_PROBLEMS = 20;

interface Pending {
  value: unknown;
  level: number;
  path: string;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * Whether `value` (a message, level 1) stays within the depth limit and holds no `__proto__` key. A
 * walk that builds no paths and uses no recursion: the common, valid case costs one pass and a
 * hostile one (thousands of levels) cannot overflow the stack.
 */
function shapeIsSound(value: unknown, maxDepth: number): boolean {
  const values: unknown[] = [value];
  const levels: number[] = [1];
  while (values.length > 0) {
    const current = values.pop();
    const level = levels.pop() as number;
    if (typeof current !== 'object' || current === null) continue;
    if (level > maxDepth) return false;
    if (Array.isArray(current)) {
      for (const element of current) {
        values.push(element);
        levels.push(level + 1);
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      if (key === '__proto__') return false;
      values.push((current as Record<string, unknown>)[key]);
      levels.push(level + 1);
    }
  }
  return true;
}

/**
 * What is wrong with the shape of a message before any validator walks it (CONTRACT §4): each path
 * where the depth limit was passed (not descended into) and each `__proto__` key. Paths are relative
 * to the message, as MessageProblem's are. Iterative, so no depth of input overflows the stack; every
 * recursive walk after it (class-validator, the NUL check, the form encoder) is bounded by the limit.
 */
export function messageShapeProblems(message: unknown): MessageProblem[] {
  return shapeProblems(message, MAX_MESSAGE_DEPTH);
}

/**
 * The same check of a value that holds a message one level down (an ingest envelope, `{message, …}`),
 * so that the paths it names are the body's own (`message.a.b`). Every other value in the envelope
 * is held to the same depth, since the envelope's validators walk it too.
 */
export function envelopeShapeProblems(envelope: unknown): MessageProblem[] {
  return shapeProblems(envelope, MAX_MESSAGE_DEPTH + 1);
}

function shapeProblems(root: unknown, maxDepth: number): MessageProblem[] {
  if (shapeIsSound(root, maxDepth)) return [];
  const problems: MessageProblem[] = [];
  const pending: Pending[] = [{ value: root, level: 1, path: '' }];
  while (pending.length > 0 && problems.length < MAX_SHAPE_PROBLEMS) {
    const { value, level, path } = pending.pop() as Pending;
    if (typeof value !== 'object' || value === null) continue;
    if (level > maxDepth) {
      problems.push({ path, problem: TOO_DEEP_PROBLEM });
      continue;
    }
    const children: Pending[] = [];
    if (Array.isArray(value)) {
      value.forEach((element, index) => children.push({ value: element, level: level + 1, path: childPath(path, index) }));
    } else {
      for (const key of Object.keys(value)) {
        const keyPath = childPath(path, key);
        if (key === '__proto__') problems.push({ path: keyPath, problem: PROTO_KEY_PROBLEM });
        else children.push({ value: (value as Record<string, unknown>)[key], level: level + 1, path: keyPath });
      }
    }
    // Reversed so problems come out in document order.
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]);
  }
  return problems.slice(0, MAX_SHAPE_PROBLEMS);
}
