import type { RedisClient } from './redis-connection';
import { RedisKeys } from './redis-keys';
import { RedisScript } from './redis-script';

/**
 * The erasure stamp (CONTRACT §12) lets a worker skip re-reading an event in PostgreSQL just before its
 * call while no erasure can have committed since the event was loaded. Without it every call waited
 * for one more statement (on a loaded machine, as long as the event's own load).
 *
 * The rules both sides keep:
 * - An erasure step stamps Redis (stampErasureStep) before its transaction, and its transaction does
 *   not commit earlier than ERASURE_NOTICE_MS after the stamp key was created, nor once the key has
 *   less than ERASURE_STAMP_KEEP_MS + STAMP_COMMIT_MARGIN_MS left (checkErasureStamp, just before the
 *   commit). So the key exists from ERASURE_NOTICE_MS before every erasure commit until at least
 *   ERASURE_STAMP_KEEP_MS after it.
 * - A worker that found no key in a reading started at `readAt` and answered at `answeredAt` knows:
 *   nothing was erased between `answeredAt - ERASURE_STAMP_KEEP_MS` and the reading, and nothing will
 *   be before `readAt + ERASURE_NOTICE_MS`. A call that starts before `readAt + ERASURE_TRUST_MS` of an
 *   event whose load started after `answeredAt - ERASURE_STAMP_KEEP_MS` therefore needs no re-read; any
 *   other call re-reads, as does every call while the key exists or when Redis does not answer.
 */
export const ERASURE_NOTICE_MS = 1_000;
/** How long a worker trusts a reading without the key: the notice less a margin for timers and the call's own start. */
export const ERASURE_TRUST_MS = 800;
/** The key outlives every erasure commit by at least this long. */
export const ERASURE_STAMP_KEEP_MS = 10_000;
/** Each stamp keeps the key this long: the step's wait, its transaction, then the keep above. */
const STAMP_TTL_MS = 30_000;
/** What checkErasureStamp leaves for the commit itself, beyond the keep. */
const STAMP_COMMIT_MARGIN_MS = 5_000;

/**
 * Creates or renews the key (its value: when it was created, in the Redis server's clock) and answers
 * how many ms remain before a step may commit (≤ 0: at once).
 */
const STAMP = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local created = tonumber(redis.call('GET', KEYS[1])) or now
redis.call('SET', KEYS[1], created, 'PX', ARGV[1])
return created + tonumber(ARGV[2]) - now`);

/** Thrown before an erasure step commits when its stamp no longer covers the commit (too slow a step, or Redis lost the key). */
export class ErasureStampLostError extends Error {
  constructor(leftMs: number) {
    super(`the erasure stamp has ${leftMs} ms left, too little to commit this step under it; the step is taken again`);
    this.name = 'ErasureStampLostError';
  }
}

/**
 * Before an erasure step's transaction: stamps Redis and resolves once the step may commit, by Redis's
 * clock (asked again after each wait: a local timer may fire a little early).
 */
export async function stampErasureStep(redis: Pick<RedisClient, 'evalsha' | 'eval'>, prefix: string): Promise<void> {
  for (;;) {
    const waitMs = Number(await STAMP.run(redis, [new RedisKeys(prefix).erasureStamp()], [STAMP_TTL_MS, ERASURE_NOTICE_MS]));
    if (waitMs <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** Just before an erasure step commits: throws ErasureStampLostError unless the key outlives the commit by ERASURE_STAMP_KEEP_MS. */
export async function checkErasureStamp(redis: Pick<RedisClient, 'pttl'>, prefix: string): Promise<void> {
  const leftMs = await redis.pttl(new RedisKeys(prefix).erasureStamp());
  if (leftMs < ERASURE_STAMP_KEEP_MS + STAMP_COMMIT_MARGIN_MS) throw new ErasureStampLostError(leftMs);
}

/** Whether the key exists now (a worker's reading). */
export async function erasureStamped(redis: Pick<RedisClient, 'exists'>, prefix: string): Promise<boolean> {
  return (await redis.exists(new RedisKeys(prefix).erasureStamp())) > 0;
}
