import { hostileValueProblem, MAX_REQUEST_DEPTH } from './hostile-request';

describe('hostileValueProblem', () => {
  it('names the first string or key holding U+0000, with the paths of the error details', () => {
    expect(hostileValueProblem({ name: 'ok', tags: ['a', 'b\u0000'] })?.path).toBe('tags[1]');
    expect(hostileValueProblem({ permissions: { 'customer_create\u0000': true } })?.path).toBe('permissions.customer_create\u0000');
    expect(hostileValueProblem('\u0000')).toEqual({ path: '', problem: 'the request body must not contain the NUL character (\\u0000)' });
    expect(hostileValueProblem({ a: 1, b: null, c: [true, { d: 'fine' }], constructor: { toString: 1 } })).toBeNull();
  });

  it('refuses nesting past the limit at the path where it was passed', () => {
    let within: unknown = 1;
    for (let level = 1; level < MAX_REQUEST_DEPTH; level += 1) within = [within];
    expect(hostileValueProblem({ a: within })).toBeNull();
    expect(hostileValueProblem({ a: [within] })).toEqual({ path: `a${'[0]'.repeat(MAX_REQUEST_DEPTH - 1)}`, problem: expect.stringContaining('nests deeper than 32 levels') });
  });

  it('refuses __proto__ anywhere', () => {
    expect(hostileValueProblem(JSON.parse('{"a":[{"__proto__":{}}]}'))).toEqual({ path: 'a[0].__proto__', problem: 'the key __proto__ is not allowed' });
  });

  it('walks a body of a million levels without overflowing the stack', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 1_000_000; level += 1) deep = [deep];
    expect(hostileValueProblem({ deep })?.path).toBe(`deep${'[0]'.repeat(MAX_REQUEST_DEPTH - 1)}`);
  });
});
