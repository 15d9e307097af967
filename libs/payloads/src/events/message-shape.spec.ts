import { envelopeShapeProblems, MAX_MESSAGE_DEPTH, messageShapeProblems, PROTO_KEY_PROBLEM, TOO_DEEP_PROBLEM } from './message-shape';
import { validateEventMessage } from './validate-event-message';

/** `{id: 1, x: {a: {a: …}}}` with the message itself at level 1 and `levels` levels in all. */
function nested(levels: number): Record<string, unknown> {
  let inner: Record<string, unknown> = {};
  for (let level = levels; level > 2; level -= 1) inner = { a: inner };
  return { id: 1, x: inner };
}

function pathOfLevel(level: number): string {
  return ['x', ...new Array<string>(Math.max(0, level - 2)).fill('a')].join('.');
}

describe('messageShapeProblems', () => {
  it('accepts exactly 32 levels and names the path of level 33 when deeper', () => {
    expect(messageShapeProblems(nested(MAX_MESSAGE_DEPTH))).toEqual([]);
    expect(messageShapeProblems(nested(MAX_MESSAGE_DEPTH + 1))).toEqual([{ path: pathOfLevel(MAX_MESSAGE_DEPTH + 1), problem: TOO_DEEP_PROBLEM }]);
  });

  it('counts arrays as levels like objects', () => {
    let inner: unknown = [];
    for (let level = 0; level < MAX_MESSAGE_DEPTH - 1; level += 1) inner = [inner];
    expect(messageShapeProblems({ tags: inner })).toEqual([{ path: `tags${'[0]'.repeat(MAX_MESSAGE_DEPTH - 1)}`, problem: TOO_DEEP_PROBLEM }]);
    expect(messageShapeProblems({ tags: (inner as unknown[])[0] })).toEqual([]);
  });

  it('walks a message of a million levels without overflowing the stack', () => {
    let inner: unknown = 1;
    for (let level = 0; level < 1_000_000; level += 1) inner = [inner];
    const problems = messageShapeProblems({ id: 1, deep: inner });
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toMatch(/^deep(\[0\]){31}$/);
  });

  it('refuses __proto__ wherever it is, and nothing else of Object.prototype', () => {
    const message = JSON.parse('{"id":1,"a":[{"__proto__":{"x":1}}],"constructor":1,"toString":"t","valueOf":{},"hasOwnProperty":[]}') as unknown;
    expect(messageShapeProblems(message)).toEqual([{ path: 'a[0].__proto__', problem: PROTO_KEY_PROBLEM }]);
  });

  it('names paths under the envelope, the message one level down', () => {
    expect(envelopeShapeProblems({ account_id: 1, message: nested(MAX_MESSAGE_DEPTH) })).toEqual([]);
    expect(envelopeShapeProblems({ account_id: 1, message: nested(MAX_MESSAGE_DEPTH + 1) })).toEqual([
      { path: `message.${pathOfLevel(MAX_MESSAGE_DEPTH + 1)}`, problem: TOO_DEEP_PROBLEM },
    ]);
  });

  it('reports at most 20 problems for a message holding thousands', () => {
    const message = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`k${index}`, JSON.parse('{"__proto__":1}') as unknown]));
    expect(messageShapeProblems(message)).toHaveLength(20);
  });
});

describe('validateEventMessage on hostile shapes', () => {
  it('answers the depth problem instead of overflowing, however deep', () => {
    let inner: unknown = {};
    for (let level = 0; level < 100_000; level += 1) inner = { a: inner };
    expect(validateEventMessage('Customer_create', { id: 1, x: inner })).toEqual([{ path: pathOfLevel(MAX_MESSAGE_DEPTH + 1), problem: TOO_DEEP_PROBLEM }]);
  });

  it('keeps keys named like Object.prototype members valid at any depth', () => {
    const message = JSON.parse(
      '{"id":1,"constructor":"c","toString":1,"valueOf":null,"hasOwnProperty":true,"isPrototypeOf":[1],"cellphones":[{"id":1,"content":"x","constructor":{"toString":2}}]}',
    ) as unknown;
    expect(validateEventMessage('Customer_create', message)).toEqual([]);
    expect(validateEventMessage('Customer_create', { ...(message as object), id: 'x' })).toEqual([{ path: 'id', problem: expect.any(String) }]);
  });
});
