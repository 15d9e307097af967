import { isPlainObject } from '../plain-object';
import type { MessageProblem } from './message-problem';

const NUL = '\u0000';
const PROBLEM = 'must not contain the NUL character (\\u0000): PostgreSQL cannot store it';

/** Whether any string or key in `value` holds U+0000; a walk that builds no paths, for the common case of none. */
export function hasNulCharacter(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  if (Array.isArray(value)) return value.some(hasNulCharacter);
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) if (key.includes(NUL) || hasNulCharacter(value[key])) return true;
  }
  return false;
}

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, so such a message could never be stored: it is refused
 * with the offending path instead of failing the insert. Keys are checked as well as string values.
 */
export function nulCharacterProblems(value: unknown, path = '', problems: MessageProblem[] = []): MessageProblem[] {
  if (typeof value === 'string') {
    if (value.includes(NUL)) problems.push({ path, problem: PROBLEM });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => nulCharacterProblems(item, `${path}[${index}]`, problems));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const itemPath = path ? `${path}.${key}` : key;
      if (key.includes(NUL)) problems.push({ path: itemPath, problem: `key ${PROBLEM}` });
      nulCharacterProblems(item, itemPath, problems);
    }
  }
  return problems;
}
