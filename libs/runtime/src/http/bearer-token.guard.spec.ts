import { tokenMatches } from './bearer-token.guard';

describe('tokenMatches', () => {
  it('accepts any of the expected tokens and nothing else, whatever its length', () => {
    const expected = ['first-token', 'second-token'];
    expect(tokenMatches('first-token', expected)).toBe(true);
    expect(tokenMatches('second-token', expected)).toBe(true);
    expect(tokenMatches('second-token', expected)).toBe(true);
    expect(tokenMatches('first-toke', expected)).toBe(false);
    expect(tokenMatches('first-token-and-more', expected)).toBe(false);
    expect(tokenMatches('', expected)).toBe(false);
  });

  it('judges each list by its own tokens (the digests kept for one list never answer for another)', () => {
    expect(tokenMatches('old-token', ['old-token'])).toBe(true);
    const rotated = ['new-token'];
    expect(tokenMatches('old-token', rotated)).toBe(false);
    expect(tokenMatches('new-token', rotated)).toBe(true);
    expect(tokenMatches('anything', [])).toBe(false);
  });
});
