import { invalidParam } from './open-api-errors';

/**
 * A feed position: the inserting transaction's id and the event's seq, written `<txid>.<seq>`. Clients
 * treat it as opaque; it is plain text so it can sit in a query string untouched.
 */
export interface FeedCursor {
  txid: string;
  seq: string;
}

export const FEED_START: FeedCursor = { txid: '0', seq: '0' };
export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 500;

const CURSOR_PATTERN = /^(\d{1,20})\.(\d{1,19})$/;
const MAX_XID8 = 18446744073709551615n;
const MAX_BIGINT = 9223372036854775807n;

export function formatFeedCursor(cursor: FeedCursor): string {
  return `${cursor.txid}.${cursor.seq}`;
}

/** Absent: the oldest kept event. Anything but a cursor this API handed out is code 2000 naming `after`. */
export function parseFeedCursor(after: unknown): FeedCursor {
  if (after === undefined) return FEED_START;
  const match = typeof after === 'string' ? CURSOR_PATTERN.exec(after) : null;
  if (!match || BigInt(match[1]) > MAX_XID8 || BigInt(match[2]) > MAX_BIGINT) {
    throw invalidParam('after must be a next_cursor returned by this API');
  }
  return { txid: BigInt(match[1]).toString(), seq: BigInt(match[2]).toString() };
}

/** Absent: 100. Otherwise an integer from 1 to 500, or code 2000 naming `limit`. */
export function parseFeedLimit(limit: unknown): number {
  if (limit === undefined) return FEED_DEFAULT_LIMIT;
  if (typeof limit !== 'string' || !/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > FEED_MAX_LIMIT) {
    throw invalidParam(`limit must be an integer from 1 to ${FEED_MAX_LIMIT}`);
  }
  return Number(limit);
}
