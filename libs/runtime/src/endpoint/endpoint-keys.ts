import { createHash } from 'node:crypto';
import { RedisKeys } from '../redis/redis-keys';

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
 * The endpoint of one of an account's extra destinations (CONTRACT §11): keyed by the destination's id
 * (`dest:<id>`) rather than its URL, so its breaker, leases and pace are its own and survive a change of
 * target. Web targets share their origin's politeness cap like any push URL; a broker's key starts with
 * its scheme and host (never its credentials).
 */
export function destinationEndpointKey(accountId: number, destinationId: string, target: string): string {
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

/**
 * Storage: one hash per endpoint (`state`, `failures`, `opened_at`/`retry_at`/`probe_until` in epoch ms,
 * `probe` lease id, `last_error`) and one sorted set of concurrency leases scored by their expiry, so a
 * lease of a worker that died is reclaimed once it expires. Times come from the Redis server clock
 * (TIME), so workers with skewed clocks agree on when a cooldown ends.
 */
export function breakerKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('breaker', endpointKey);
}

/** The endpoint's pace (the worker's pace schedule writes it; the admin account view reads its rate). */
export function paceKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('pace', endpointKey);
}
