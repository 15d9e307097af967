import type Redis from 'ioredis';
import { breakerKey, destinationEndpointKey } from '@app/runtime';

/**
 * closed, open or half_open, as the workers keep a destination's breaker (destinationEndpointKey). The
 * key takes the target's scheme and host only, which the shown target (password as `***`) has intact,
 * so views never unseal a target to read it. A destination nothing was recorded for is closed.
 */
export async function destinationBreakerState(redis: Redis, prefix: string, accountId: number, destinationId: string, shownTarget: string): Promise<string> {
  let endpointKey: string;
  try {
    endpointKey = destinationEndpointKey(accountId, destinationId, shownTarget);
  } catch {
    return 'closed';
  }
  let state: string | null;
  try {
    state = await redis.hget(breakerKey(prefix, endpointKey), 'state');
  } catch {
    // Redis away: the change is stored already, and an answer that failed here would lose a create's secret.
    return 'closed';
  }
  return state === 'open' || state === 'half_open' ? state : 'closed';
}
