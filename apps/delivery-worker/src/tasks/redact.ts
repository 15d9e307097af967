import { REDACTED_VALUE } from '@app/payloads';

/**
 * The stored copies with redacted values (CONTRACT §12): every key of one of `fields`, at any depth,
 * holds "[redacted]" in place of its value (a whole object or array included). Pure functions: the
 * background pass (RedactionPass) applies them to messages and attempts' request bodies.
 */

type Container = Record<string, unknown> | unknown[];

/** A shallow copy of a container with the fields' values replaced; scalars are answered as they are. */
function redactedCopy(value: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return [...(value as unknown[])];
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(value)) copy[name] = fields.has(name) ? REDACTED_VALUE : child;
  return copy;
}

/** A deep copy of `value` with the fields' values replaced; an explicit stack, as messages may nest deeply. */
export function redactValue(value: unknown, fields: ReadonlySet<string>): unknown {
  const root = redactedCopy(value, fields);
  const stack: Container[] = typeof root === 'object' && root !== null ? [root as Container] : [];
  while (stack.length > 0) {
    const container = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(container)) {
      if (!Array.isArray(container) && fields.has(key)) continue;
      const copy = redactedCopy(container[key], fields);
      container[key] = copy;
      if (typeof copy === 'object' && copy !== null) stack.push(copy as Container);
    }
  }
  return root;
}

/** A stored JSON text redacted, or null when nothing in it changes (or it is not JSON). */
export function redactJsonText(text: string, fields: ReadonlySet<string>): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const redacted = JSON.stringify(redactValue(parsed, fields));
  return redacted === JSON.stringify(parsed) ? null : redacted;
}

const REDACTED_FORM_VALUE = encodeURIComponent(REDACTED_VALUE);

/** The name segments of a form pair: `message[cellphones][0][id]` → message, cellphones, 0, id. */
function formSegments(name: string): string[] {
  return name.split(/[[\]]+/).filter((segment) => segment !== '').map((segment) => decodeURIComponent(segment.replace(/\+/g, ' ')));
}

/**
 * A callback body in the form encoding (CONTRACT §5) redacted: every pair whose name passes through
 * one of the fields holds "[redacted]"; null when nothing changes.
 */
export function redactFormText(text: string, fields: ReadonlySet<string>): string | null {
  let changed = false;
  const pairs = text.split('&').map((pair) => {
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    let segments: string[];
    try {
      segments = formSegments(name);
    } catch {
      return pair;
    }
    if (!segments.some((segment) => fields.has(segment))) return pair;
    changed = true;
    return `${name}=${REDACTED_FORM_VALUE}`;
  });
  return changed ? pairs.join('&') : null;
}

/** An attempt's request body in whichever encoding it was sent; null when nothing changes. */
export function redactRequestBody(body: string, fields: ReadonlySet<string>): string | null {
  return body.trimStart().startsWith('{') ? redactJsonText(body, fields) : redactFormText(body, fields);
}
