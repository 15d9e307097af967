import { OpenApiError } from '@app/runtime';
import { FEED_START, formatFeedCursor, parseFeedCursor, parseFeedLimit } from './feed-cursor';

function exceptionOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof OpenApiError) return JSON.stringify(error.getResponse());
    throw error;
  }
  throw new Error('expected an OpenApiError');
}

describe('feed cursor', () => {
  it('round-trips what it formats and starts at the oldest when absent', () => {
    const cursor = { txid: '18446744073709551615', seq: '1870000000000000001' };
    expect(parseFeedCursor(formatFeedCursor(cursor))).toEqual(cursor);
    expect(parseFeedCursor(undefined)).toEqual(FEED_START);
    expect(parseFeedCursor('007.01')).toEqual({ txid: '7', seq: '1' });
  });

  it.each(['', 'abc', '1', '1.', '.1', '1.2.3', '-1.2', '1.-2', '18446744073709551616.1', '1.9223372036854775808', ' 1.2'])(
    'refuses %j naming after',
    (after) => {
      expect(exceptionOf(() => parseFeedCursor(after))).toContain('after must be');
    },
  );

  it('refuses a repeated parameter (an array) naming after', () => {
    expect(exceptionOf(() => parseFeedCursor(['1.1', '2.2']))).toContain('after must be');
  });
});

describe('feed limit', () => {
  it('defaults to 100 and accepts 1 to 500', () => {
    expect(parseFeedLimit(undefined)).toBe(100);
    expect(parseFeedLimit('1')).toBe(1);
    expect(parseFeedLimit('500')).toBe(500);
  });

  it.each(['0', '501', '-1', '1.5', 'ten', '', '99999'])('refuses %j naming limit', (limit) => {
    expect(exceptionOf(() => parseFeedLimit(limit))).toContain('limit must be an integer from 1 to 500');
  });
});
