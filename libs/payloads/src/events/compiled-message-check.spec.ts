import { EVENT_ACTIONS } from '../actions';
import { SAMPLE_MESSAGES } from './sample-messages';
import { passesCompiledCheck, plainTreeUnchanged } from './compiled-message-check';
import { classValidatorProblems, MESSAGE_CLASSES } from './validate-event-message';

type Json = Record<string, unknown>;

const REPLACEMENTS: unknown[] = [
  undefined, null, '', 'x', 'company', '90s', '2024-05-01 12:30:00', '2024-05-01 12:30:00 +0800', '{"a":1}', 0, -1, 1.5, 2 ** 31, 2 ** 53,
  true, false, [], {}, [null], [1], ['a'], [{}], [[{}]], { SelectField_1: 'a' }, { a: [1, 2] },
];

/** Every path in a message: object keys and array indexes, nested. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => [[...prefix, index], ...paths(item, [...prefix, index])]);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => [[...prefix, key], ...paths(item, [...prefix, key])]);
  return [];
}

function withValue(message: Json, path: (string | number)[], replacement: unknown): Json {
  const copy = structuredClone(message);
  let parent: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (replacement === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = replacement;
  return copy;
}

describe('the compiled message check', () => {
  it.each(EVENT_ACTIONS.map((action) => [action]))('knows the %s sample valid without class-validator', (action) => {
    const message = structuredClone(SAMPLE_MESSAGES[action]) as Json;
    expect(passesCompiledCheck(MESSAGE_CLASSES[action], message)).toBe(true);
    expect(classValidatorProblems(MESSAGE_CLASSES[action], message)).toEqual([]);
  });

  it.each(EVENT_ACTIONS.map((action) => [action]))('never calls a %s message valid that class-validator refuses (every field broken every way)', (action) => {
    const sample = SAMPLE_MESSAGES[action] as Json;
    let refused = 0;
    for (const path of paths(sample)) {
      for (const replacement of REPLACEMENTS) {
        const message = withValue(sample, path, replacement);
        // Its own action, and the next one's (messages of one shape judged by another class's rules).
        const next = EVENT_ACTIONS[(EVENT_ACTIONS.indexOf(action) + 1) % EVENT_ACTIONS.length];
        for (const target of [action, next]) {
          const problems = classValidatorProblems(MESSAGE_CLASSES[target], message);
          if (problems.length > 0) refused += 1;
          if (passesCompiledCheck(MESSAGE_CLASSES[target], message)) expect({ path, replacement, target, problems }).toEqual({ path, replacement, target, problems: [] });
        }
      }
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('defers on trees class-transformer would copy differently', () => {
    expect(plainTreeUnchanged({ a: [{ b: 1 }], c: 'x' })).toBe(true);
    expect(plainTreeUnchanged(JSON.parse('{"a": {"__proto__": {"x": 1}}}'))).toBe(false);
    expect(plainTreeUnchanged({ a: [{ constructor: 1 }] })).toBe(false);
    expect(plainTreeUnchanged({ a: new Date() })).toBe(false);
    expect(plainTreeUnchanged({ a: Object.create(null) as object })).toBe(false);
  });
});
