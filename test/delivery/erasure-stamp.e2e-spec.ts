import Redis from 'ioredis';
import { checkErasureStamp, ERASURE_NOTICE_MS, ERASURE_STAMP_KEEP_MS, erasureStamped, ErasureStampLostError, RedisKeys, stampErasureStep } from '@app/runtime';
import { redisNowMs } from '../support/redis-clock';
import { deleteKeysUnder, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('erasure-stamp');

/**
 * The erasure stamp's rules on a real Redis (libs/runtime erasure-stamp.ts): a step commits no earlier
 * than the notice after the key appeared, and never once the key could expire within the keep.
 */
describe('the erasure stamp', () => {
  let redis: Redis;
  const key = new RedisKeys(PREFIX).erasureStamp();

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  });

  afterAll(async () => {
    await deleteKeysUnder(PREFIX);
    redis.disconnect();
  });

  it('holds the first step of an erasure for the notice after the key appeared (in Redis time), the next ones not again', async () => {
    await redis.del(key);
    expect(await erasureStamped(redis, PREFIX)).toBe(false);
    const before = await redisNowMs(redis);
    await stampErasureStep(redis, PREFIX);
    // The key says when it appeared; the step was let go only once the notice had passed since.
    const created = Number(await redis.get(key));
    expect(created).toBeGreaterThanOrEqual(before);
    expect(await redisNowMs(redis)).toBeGreaterThanOrEqual(created + ERASURE_NOTICE_MS);
    expect(await erasureStamped(redis, PREFIX)).toBe(true);
    await expect(checkErasureStamp(redis, PREFIX)).resolves.toBeUndefined();

    // A later step renews the key and keeps when it appeared, so it has no notice left to wait for.
    await stampErasureStep(redis, PREFIX);
    expect(Number(await redis.get(key))).toBe(created);
    expect(await redis.pttl(key)).toBeGreaterThan(ERASURE_STAMP_KEEP_MS);
  });

  it('refuses to let a step commit once the key is gone or would expire within the keep', async () => {
    await redis.del(key);
    await expect(checkErasureStamp(redis, PREFIX)).rejects.toBeInstanceOf(ErasureStampLostError);
    await redis.set(key, '1', 'PX', ERASURE_STAMP_KEEP_MS);
    await expect(checkErasureStamp(redis, PREFIX)).rejects.toBeInstanceOf(ErasureStampLostError);
  });
});
