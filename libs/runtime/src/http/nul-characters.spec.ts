import { nulCharacterPath } from './nul-characters';

describe('nulCharacterPath', () => {
  it('names the first string or key holding U+0000, with the paths of the error details', () => {
    expect(nulCharacterPath({ name: 'ok', tags: ['a', 'b\u0000'] })).toBe('tags[1]');
    expect(nulCharacterPath({ permissions: { 'customer_create\u0000': true } })).toBe('permissions.customer_create\u0000');
    expect(nulCharacterPath('\u0000')).toBe('');
    expect(nulCharacterPath({ a: 1, b: null, c: [true, { d: 'fine' }] })).toBeNull();
  });

  it('walks a body of a million levels without overflowing the stack', () => {
    let deep: unknown = 'x\u0000';
    for (let level = 0; level < 1_000_000; level += 1) deep = [deep];
    expect(nulCharacterPath({ deep })).toBe(`deep${'[0]'.repeat(1_000_000)}`);
  });
});
