import { completeUtf8Prefix, cutUtf8 } from './utf8-prefix';

describe('cutUtf8', () => {
  it('keeps text that fits, and cuts longer text to the byte limit on a character boundary', () => {
    expect(cutUtf8('abc', 4)).toBe('abc');
    expect(cutUtf8('abcdef', 4)).toBe('abcd');
    expect(cutUtf8('ab对接', 4)).toBe('ab');
    expect(cutUtf8('ab对接', 5)).toBe('ab对');
    expect(Buffer.byteLength(cutUtf8('对'.repeat(5000), 4096))).toBeLessThanOrEqual(4096);
  });

  it('answers a prefix of the text for every cut through four-byte characters', () => {
    const text = `a${'😀'.repeat(6)}`;
    for (let bytes = 0; bytes <= Buffer.byteLength(text); bytes += 1) {
      const kept = cutUtf8(text, bytes);
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(bytes);
      expect(text.startsWith(kept)).toBe(true);
      expect(Buffer.byteLength(kept)).toBeGreaterThan(bytes - 4);
    }
  });
});

describe('completeUtf8Prefix', () => {
  it('drops a character the cut split, and keeps one it did not', () => {
    const euro = Buffer.from('a€', 'utf8');
    expect(completeUtf8Prefix(euro.subarray(0, 2))).toBe('a');
    expect(completeUtf8Prefix(euro.subarray(0, 3))).toBe('a');
    expect(completeUtf8Prefix(euro)).toBe('a€');
    expect(completeUtf8Prefix(Buffer.alloc(0))).toBe('');
  });
});
