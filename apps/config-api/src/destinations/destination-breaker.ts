import type Redis from 'ioredis';
import { breakerKey } from '@app/runtime';

/** The key the workers keep a destination's breaker under (its own, apart from the primary's). */
export function destinationEndpointKey(accountId: number, destinationId: string): string {
  return `${destinationId}|${accountId}|destination`;
}

/** closed, open or half_open; a destination nothing was recorded for is closed. */
export async function destinationBreakerState(redis: Redis, prefix: string, accountId: number, destinationId: string): Promise<string> {
  const state = await redis.hget(breakerKey(prefix, destinationEndpointKey(accountId, destinationId)), 'state');
  return state === 'open' || state === 'half_open' ? state : 'closed';
}
