import fc from 'fast-check';
import { EVENT_ACTIONS, PERMISSION_KEYS } from '@app/payloads';

/**
 * Generators of hostile input for the fuzz suite: text of every kind (odd Unicode, lone surrogates,
 * NUL and other controls), numbers past every limit, JSON of every shape and depth, values of the
 * wrong type, and query strings, headers and paths built from them.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Percent-encoding of any text, lone surrogates included (as U+FFFD, which is what a browser sends). */
export function encodeAny(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'));
}

/** Text that breaks naive code: controls, NUL, lone surrogates, astral characters, huge digits, dates in odd forms. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff\ud800',
    '😀'.repeat(3),
    '\u202e\u200b',
    '%00',
    '%',
    '%E0%A4%A',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "'; DROP TABLE events; --",
    '__proto__',
    'constructor',
    'toString',
    'NaN',
    'Infinity',
    '-0',
    '1e309',
    '9'.repeat(40),
    '-9223372036854775809',
    '0x10',
    '2300-01-01',
    '0001-01-01',
    '9999-12-31T23:59:59Z',
    '2020-W01',
    '2020-123',
    '2025-02-30',
    '2025-01-01T25:00:00Z',
    '+275760-09-13',
    'v1:9999999999999999999',
    'djE6OTk5OTk5OTk5OTk5OTk5OTk5OQ',
    'x'.repeat(5000),
  ),
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE),
);

/** An array nested `depth` times around a value, or an object chain, a few dozen levels: past the 32-level limit. */
const deeplyNested: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 20, max: 60 }), fc.boolean(), fc.jsonValue({ maxDepth: 1 }))
  .map(([depth, asArrays, leaf]) => {
    let value: unknown = leaf;
    for (let level = 0; level < depth; level += 1) value = asArrays ? [value] : { a: value };
    return value;
  });

/**
 * JSON text nested thousands of levels deep, built as text: as values, such depths would overflow the
 * test's own recursive code (JSON.stringify, fast-check's reporting) before reaching a server.
 */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 33, max: 50_000 }), fc.boolean())
  .map(([depth, asArrays]) => (asArrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** Any JSON value, shallow or deep, with hostile keys and strings inside. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: fc.dictionary(hostileText, fc.oneof(hostileText, hostileNumber, fc.jsonValue({ maxDepth: 2 })), { maxKeys: 6 }) },
  { weight: 1, arbitrary: deeplyNested },
  { weight: 1, arbitrary: fc.array(fc.oneof(hostileText, hostileNumber, fc.constant(null)), { maxLength: 8 }) },
  { weight: 1, arbitrary: fc.oneof(hostileText, hostileNumber, fc.boolean(), fc.constant(null)) },
);

/** A JSON object with some of the given field names (known to the route) and some unknown ones, any values. */
export function objectWithFields(fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const known = fields.length ? fc.dictionary(fc.constantFrom(...fields), hostileJson, { maxKeys: fields.length }) : fc.constant({});
  return fc.tuple(known, fc.dictionary(hostileText, hostileJson, { maxKeys: 2 })).map(([a, b]) => ({ ...b, ...a }));
}

/** A request body as sent on the wire: JSON of any shape, or bytes that are not JSON at all. */
export function hostileBody(fields: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: objectWithFields(fields).map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: hostileJson.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...fields, 'x'), deepJsonText).map(([field, deep]) => `{${JSON.stringify(field)}:${deep}}`) },
    { weight: 1, arbitrary: fc.constantFrom('{bad', '{"a":', '[', 'null', '', '\u0000', '{"__proto__":{"x":1}}', '{"a":1,"a":2}', '1'.repeat(400)) },
  );
}

/** A query string of the route's own parameters and unknown ones, hostile values, repeated and bracketed names. */
export function hostileQuery(names: readonly string[]): fc.Arbitrary<string> {
  const name = names.length ? fc.oneof(fc.constantFrom(...names), hostileText, fc.constantFrom(...names).map((n) => `${n}[]`)) : hostileText;
  return fc.array(fc.tuple(name, hostileText), { maxLength: 6 }).map((pairs) => pairs.map(([key, value]) => `${encodeAny(key)}=${encodeAny(value)}`).join('&'));
}

/** A path parameter: ids in and out of range, text, encoded NUL and slashes. */
export const hostilePathParameter: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 5 }).map(String),
  hostileNumber.map(String),
  hostileText.map((text) => encodeAny(text) || 'x'),
  fc.constantFrom('%00', '%2F', '..', '%2e%2e', '1%00', '99999999999', '0x1', '%20', '%ff', '%', '%E0%A4%A'),
);

/** The content types a request may claim, correct or not. */
export const hostileContentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  undefined,
);

/** Extra request headers: ones servers act on (encodings, ranges, forwarding, cookies) and made-up ones, odd values. */
export const hostileHeaders: fc.Arbitrary<Record<string, string>> = fc.dictionary(
  fc.oneof(
    fc.constantFrom('content-encoding', 'accept-encoding', 'accept', 'range', 'if-none-match', 'x-forwarded-for', 'forwarded', 'cookie', 'origin', 'x-request-id'),
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
  ),
  fc.oneof(
    fc.constantFrom('gzip', 'deflate', 'br', 'identity, gzip', 'bytes=0-0', 'bytes=5-1', '*', '../', '1.2.3.4, 10.0.0.1', 'a=b; c=d', 'null', '100-continue'),
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 200 }),
  ),
  { maxKeys: 3 },
);

/** Envelopes of ingest events around hostile messages, as JSON text (a few around messages thousands of levels deep). */
export function ingestEventText(accountId: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: ingestEvent(accountId).map((event) => JSON.stringify(event)) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...EVENT_ACTIONS), deepJsonText).map(([action, deep]) => `{"account_id":${accountId},"action":"${action}","message":{"id":1,"deep":${deep}}}`),
    },
  );
}

/** Envelopes of ingest events around hostile messages, for one account (most envelopes valid, so the message is judged). */
function ingestEvent(accountId: number): fc.Arbitrary<unknown> {
  return fc.record(
    {
      account_id: fc.oneof({ weight: 6, arbitrary: fc.constant<unknown>(accountId) }, { weight: 1, arbitrary: hostileJson }),
      action: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<unknown>(...EVENT_ACTIONS) }, { weight: 1, arbitrary: hostileJson }),
      message: fc.oneof({ weight: 6, arbitrary: objectWithFields(['id', 'changes', 'im_sub_session_log', 'customer_id', 'note_id', 'sub_session_id', 'option_id', 'cellphones', 'custom_fields', 'queue_type']) }, { weight: 1, arbitrary: hostileJson }),
      event_id: fc.oneof(fc.constant(undefined), hostileText, hostileJson),
    },
    { requiredKeys: ['account_id', 'action', 'message'] },
  );
}

export const PERMISSION_FIELDS = PERMISSION_KEYS;

/** Every letter of `path` upper- or lower-cased at random: Express routes match any spelling. */
export function caseVariant(path: string): fc.Arbitrary<string> {
  return fc.array(fc.boolean(), { minLength: path.length, maxLength: path.length }).map((flips) => [...path].map((c, i) => (flips[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
}
