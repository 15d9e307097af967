import { MAX_EXPECTED_WAIT_MS } from './endpoint-timing';

/**
 * An endpoint refused for want of room at its origin (a worker refused a lease of an endpoint) counts as
 * waiting for this long: as long as a job may wait in a worker for a lease expected in time.
 */
export const WAIT_MARK_MS = MAX_EXPECTED_WAIT_MS;

/** Breaker hashes of endpoints nobody delivers to any more disappear after this long. */
export const BREAKER_KEEP_MS = 7 * 24 * 60 * 60 * 1000;
