/**
 * Rails-style `application/x-www-form-urlencoded` bodies (CONTRACT §5):
 * `action=Customer_create&message[id]=1&message[tags][]=vip&message[cellphones][0][id]=1`.
 *
 * - objects nest as `key[child]`; arrays holding only scalars repeat `key[]=v`; arrays holding any object
 *   or array use indices `key[0][…]`, which is how Rack, PHP and `qs` tell array elements apart;
 * - `null` is `key=`, booleans `true`/`false`, numbers as JSON writes them;
 * - empty arrays and empty objects are left out (no parser can read them back from a form anyway).
 *
 * Every name segment and value is escaped with the WHATWG form rules (UTF-8, `*-._` and alphanumerics
 * kept, space as `+`); only the structural brackets stay literal, so a `[` inside a key is `%5B` and can
 * never be mistaken for nesting. `qs` ships no mode that mixes index and empty-bracket arrays, hence this
 * small encoder.
 */

type Pair = [name: string, value: string];

const NEEDS_ESCAPE = /[^A-Za-z0-9*\-._ ]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The WHATWG application/x-www-form-urlencoded byte serializer, as URLSearchParams applies it. */
export function formEscape(text: string): string {
  // Lone surrogates become U+FFFD, as the USVString conversion in URLSearchParams does.
  const wellFormed = text.replace(LONE_SURROGATE, '\uFFFD');
  if (!NEEDS_ESCAPE.test(wellFormed)) return wellFormed.replace(/ /g, '+');
  return encodeURIComponent(wellFormed)
    .replace(/%20/g, '+')
    .replace(/[!'()~]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function scalarText(value: unknown): string | undefined {
  if (value === null) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      // JSON has no NaN/Infinity; JSON.stringify writes them as null, so do the same.
      return Number.isFinite(value) ? String(value) : '';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    default:
      // undefined, functions, symbols: JSON leaves these out, so the form does too.
      return undefined;
  }
}

/**
 * Depth first, in document order, with a stack of its own instead of recursion: a message nests at
 * most 32 levels when ingest accepts it (CONTRACT §4), but rows stored before that limit, or written
 * by other means, must not overflow the call stack (the event would never settle).
 */
function collect(rootName: string, root: unknown, pairs: Pair[]): void {
  const pending: Pair[] = [];
  const values: unknown[] = [];
  const push = (name: string, value: unknown): void => {
    pending.push([name, '']);
    values.push(value);
  };
  push(rootName, root);
  while (values.length > 0) {
    const value = values.pop();
    const [name] = pending.pop() as Pair;
    if (Array.isArray(value)) {
      const indexed = value.some(isContainer);
      for (let index = value.length - 1; index >= 0; index -= 1) push(indexed ? `${name}[${index}]` : `${name}[]`, value[index]);
    } else if (isContainer(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      for (let index = entries.length - 1; index >= 0; index -= 1) push(`${name}[${formEscape(entries[index][0])}]`, entries[index][1]);
    } else {
      const text = scalarText(value);
      if (text !== undefined) pairs.push([name, formEscape(text)]);
    }
  }
}

/** Encodes `{action, message}` as the form body; names are built from escaped segments (see above). */
export function encodeFormBody(action: string, message: unknown): string {
  const pairs: Pair[] = [['action', formEscape(action)]];
  collect('message', message, pairs);
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}
