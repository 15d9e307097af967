import type Redis from 'ioredis';
import type { BreakerState as EndpointState } from '@app/payloads';
import type { RedisKeys } from '../redis/redis-keys';
import { endpointKeyOf } from './endpoint-keys';

/**
 * Circuit-breaker state of one callback endpoint, shared by every worker through Redis.
 * The delivery worker writes it (its admission's lease scripts); the admin account view reads it, in the shape the admin API declares once for the server and the console.
 */
export type { EndpointState };

function isoOrNull(epochMs: string | undefined): string | null {
  if (!epochMs) return null;
  const value = Number(epochMs);
  return Number.isFinite(value) && value > 0 ? new Date(value).toISOString() : null;
}

const CLOSED: EndpointState = { state: 'closed', consecutive_failures: 0, opened_at: null, retry_at: null, last_error: null };

function stateOf(stored: Record<string, string>): EndpointState {
  const state = stored.state === 'open' || stored.state === 'half_open' ? stored.state : 'closed';
  return {
    state,
    consecutive_failures: Number(stored.failures ?? 0) || 0,
    opened_at: state === 'closed' ? null : isoOrNull(stored.opened_at),
    retry_at: state === 'closed' ? null : isoOrNull(stored.retry_at),
    last_error: stored.last_error ? stored.last_error : null,
  };
}

/** The breaker of one account's push URL as stored; an endpoint nothing has been recorded for is closed with no failures. */
export async function readEndpointState(redis: Redis, keys: RedisKeys, accountId: number, url: string): Promise<EndpointState> {
  let endpointKey: string;
  try {
    endpointKey = endpointKeyOf(accountId, url);
  } catch {
    return { ...CLOSED };
  }
  return stateOf(await redis.hgetall(keys.breaker(endpointKey)));
}

export interface OpenEndpoint {
  /** The endpoint's key (endpointKeyOf): its origin, account and URL digest. */
  endpoint: string;
  breaker: EndpointState;
}

/**
 * Endpoints whose breaker is open or half open, most recently opened first (at most `limit`). Reads
 * the index the workers keep and checks each member against its breaker hash; members whose breaker is
 * closed or gone are removed from the index on the way.
 */
export async function listOpenEndpoints(redis: Redis, keys: RedisKeys, limit = 500): Promise<OpenEndpoint[]> {
  const key = keys.openEndpoints();
  const members = await redis.smembers(key);
  // One command per member (auto-pipelined by ioredis when enabled); works the same on a Redis Cluster,
  // where the breaker hashes live in different slots.
  const states = await Promise.all(members.map(async (endpoint) => ({ endpoint, breaker: stateOf(await redis.hgetall(keys.breaker(endpoint))) })));
  const stale = states.filter(({ breaker }) => breaker.state === 'closed').map(({ endpoint }) => endpoint);
  if (stale.length > 0) await redis.srem(key, ...stale);
  return states
    .filter(({ breaker }) => breaker.state !== 'closed')
    .sort((a, b) => (b.breaker.opened_at ?? '').localeCompare(a.breaker.opened_at ?? '') || a.endpoint.localeCompare(b.endpoint))
    .slice(0, Math.max(0, limit));
}

/** How many endpoints the index holds (may briefly include some whose breaker closed meanwhile): a cheap gauge. */
export async function countOpenEndpoints(redis: Redis, keys: RedisKeys): Promise<number> {
  return redis.scard(keys.openEndpoints());
}

/** The endpoint's allowed calls per second now: the backed-off rate, else max_per_second, else null (no pace). */
export async function readEndpointPace(redis: Redis, keys: RedisKeys, endpointKey: string, maxPerSecond: number | null): Promise<number | null> {
  const stored = Number(await redis.hget(keys.pace(endpointKey), 'rate'));
  const backedOff = Number.isFinite(stored) && stored > 0 ? stored : null;
  if (backedOff === null) return maxPerSecond;
  const rate = maxPerSecond === null ? backedOff : Math.min(backedOff, maxPerSecond);
  return Math.round(rate * 100) / 100;
}
