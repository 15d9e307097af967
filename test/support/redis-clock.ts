import type { Cluster, Redis } from 'ioredis';
import { waitFor } from '@app/testing';

/**
 * Redis's own clock (epoch ms): the endpoint scripts measure lease expiries, breaker cooldowns and paces
 * with it (TIME), so a test waits on it rather than on a local sleep of the same length.
 */
export async function redisNowMs(redis: Redis | Cluster): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Until Redis's clock is past `epochMs` (a lease's expiry, a cooldown's end): a condition read from the server. */
export async function untilRedisPasses(redis: Redis | Cluster, epochMs: number, what: string): Promise<void> {
  await waitFor(`Redis's clock past ${what}`, async () => (await redisNowMs(redis)) > epochMs, { intervalMs: 10 });
}
