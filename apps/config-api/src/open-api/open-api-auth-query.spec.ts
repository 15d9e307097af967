import { OpenApiError } from '@app/runtime';
import { MAX_NONCE_LENGTH, parseAuthQuery } from './open-api-auth-query';

const valid = { email: 'admin@example.com', timestamp: '1700000000', nonce: 'n-0001', sign_version: 'v2', sign: 'abc' };

function codeOf(query: Record<string, unknown>): number {
  try {
    parseAuthQuery(query);
  } catch (error) {
    if (error instanceof OpenApiError) return error.code;
    throw error;
  }
  return 1000;
}

describe('parseAuthQuery', () => {
  it('returns the values, keeping the timestamp text as signed', () => {
    expect(parseAuthQuery(valid)).toEqual({
      email: 'admin@example.com',
      timestampText: '1700000000',
      timestamp: 1_700_000_000,
      nonce: 'n-0001',
      sign: 'abc',
    });
  });

  it('refuses a missing or other sign_version with 2059', () => {
    expect(codeOf({ ...valid, sign_version: undefined })).toBe(2059);
    expect(codeOf({ ...valid, sign_version: 'v1' })).toBe(2059);
    expect(codeOf({ ...valid, sign_version: ['v2', 'v2'] })).toBe(2059);
  });

  it('refuses a missing or non-integer timestamp with 20621', () => {
    for (const timestamp of [undefined, '', '17e8', '1700000000.5', 'abc', ' 1700000000', ['1', '2']]) {
      expect(codeOf({ ...valid, timestamp })).toBe(20621);
    }
  });

  it('refuses a missing, empty or over-long nonce with 20624', () => {
    expect(codeOf({ ...valid, nonce: undefined })).toBe(20624);
    expect(codeOf({ ...valid, nonce: '' })).toBe(20624);
    expect(codeOf({ ...valid, nonce: 'x'.repeat(MAX_NONCE_LENGTH + 1) })).toBe(20624);
    expect(MAX_NONCE_LENGTH).toBe(128);
    expect(codeOf({ ...valid, nonce: 'x'.repeat(MAX_NONCE_LENGTH) })).toBe(1000);
  });

  it('refuses a missing email or sign with 2059', () => {
    expect(codeOf({ ...valid, email: undefined })).toBe(2059);
    expect(codeOf({ ...valid, sign: '' })).toBe(2059);
  });

  it('checks the version before the timestamp and the timestamp before the nonce', () => {
    expect(codeOf({ sign_version: 'v1' })).toBe(2059);
    expect(codeOf({ sign_version: 'v2' })).toBe(20621);
    expect(codeOf({ sign_version: 'v2', timestamp: '1' })).toBe(20624);
  });
});
