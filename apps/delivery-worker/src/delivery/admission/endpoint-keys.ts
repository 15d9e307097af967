import { endpointOrigin, RedisKeys } from '@app/runtime';
import { MAX_EXPECTED_WAIT_MS } from './endpoint-timing';

/** The endpoint's leases in use, scored by their expiry: a lease of a worker that died is reclaimed once it expires. */
export function leasesKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('leases', endpointKey);
}

/**
 * The workers (by id) that were refused a lease of this endpoint lately, scored by when their mark
 * lapses: while others want it, a worker holding its share of the endpoint's leases gets no more.
 */
export function wantingKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('wanting', endpointKey);
}

/** The origin's leases (every account's calls there) and the endpoints waiting for room at the origin. */
export function originKeys(prefix: string, endpointKey: string): [string, string] {
  const keys = new RedisKeys(prefix);
  const origin = endpointOrigin(endpointKey);
  return [keys.origin('leases', origin), keys.origin('waiting', origin)];
}

/**
 * An endpoint refused for want of room at its origin (a worker refused a lease of an endpoint) counts as
 * waiting for this long: as long as a job may wait in a worker for a lease expected in time.
 */
export const WAIT_MARK_MS = MAX_EXPECTED_WAIT_MS;

/** Breaker hashes of endpoints nobody delivers to any more disappear after this long. */
export const BREAKER_KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/** The places handed out in the endpoint's pace (job id → its start time, pace-schedule.ts). */
export function pacePlacesKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('places', endpointKey);
}
