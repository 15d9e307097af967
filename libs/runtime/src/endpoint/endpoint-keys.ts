import { createHash } from 'node:crypto';

/**
 * An endpoint is one account's push URL (CONTRACT §5): its breaker, concurrency share and failure clock
 * are its own, even when another account's URL is on the same origin. The key starts with the origin
 * (the Redis hash tag, shared with the origin's politeness cap) and names the URL by a digest, so a
 * long or brace-holding URL never reaches a key. Throws when `url` is not a URL.
 */
export function endpointKeyOf(accountId: number, url: string): string {
  const digest = createHash('sha256').update(url).digest('base64url').slice(0, 16);
  return `${new URL(url).origin}|${accountId}|${digest}`;
}

/**
 * The endpoint of one of an account's destinations (CONTRACT §11): an extra one is keyed by its id
 * (`dest:<id>`) rather than its URL, so its breaker, leases and pace are its own and survive a change of
 * target. Web targets share their origin's politeness cap like any push URL; a broker's key starts with
 * its scheme and host (never its credentials).
 */
export function destinationEndpointKey(accountId: number, destinationId: string, target: string): string {
  // The primary's endpoint is its push URL (endpointKeyOf): a new URL starts with a fresh breaker and pace.
  if (destinationId === PRIMARY_ENDPOINT_ID) return endpointKeyOf(accountId, target);
  const url = new URL(target);
  const origin = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `${url.protocol}//${url.host}`;
  return `${origin}|${accountId}|dest:${destinationId}`;
}

/** The account an endpoint key belongs to (null for a bare origin key). */
export function accountIdOfEndpoint(endpointKey: string): number | null {
  const [, account] = endpointKey.split('|');
  const id = Number(account);
  return account !== undefined && Number.isSafeInteger(id) ? id : null;
}

/** The primary destination's id (CONTRACT §11), as @app/persistence spells it for rows. */
const PRIMARY_ENDPOINT_ID = 'primary';
