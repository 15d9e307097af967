import { invalidQuery } from '@app/runtime';

/**
 * The list cursor is the `seq` of the last item served, base64url-encoded with a version tag: opaque
 * to clients, stable under inserts (new events get higher seqs and never shift older pages).
 */
export function encodeCursor(seq: string): string {
  return Buffer.from(`v1:${seq}`, 'utf8').toString('base64url');
}

/** The largest seq PostgreSQL's bigint holds: 19 digits may spell more, which the `::bigint` cast would refuse. */
const MAX_SEQ = 9223372036854775807n;

/** The seq to continue below; a cursor this API did not produce (or could not have) is a 422 naming `cursor`. */
export function decodeCursor(cursor: string): string {
  const match = /^v1:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || BigInt(match[1]) > MAX_SEQ) throw invalidQuery([{ path: 'cursor', problem: 'cursor must be a next_cursor value returned by this API' }]);
  return match[1];
}
