import Redis from 'ioredis';
import { RedisScript } from '../../libs/runtime/src/redis/redis-script';

/**
 * RedisScript.runEach on a real single Redis: many calls in one write, answered in order, each call's
 * error its own, and a script the server does not know yet still answered (EVAL after NOSCRIPT).
 */
describe('RedisScript.runEach', () => {
  const PREFIX = `redis-script-spec:${process.pid}`;
  let redis: Redis;
  let writes = 0;

  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    await redis.ping();
    // Counts what the client writes to its real socket: a pipeline is one write, separate calls are one each.
    const write = redis.stream.write.bind(redis.stream) as (...args: unknown[]) => boolean;
    redis.stream.write = ((...args: unknown[]) => {
      writes += 1;
      return write(...args);
    });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  // A text of its own (a unique comment), so no earlier run has loaded it into the server's script cache.
  const script = new RedisScript(`-- ${PREFIX}:${Date.now()}\nif ARGV[1] == 'fail' then return redis.error_reply('asked to fail') end\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
  const calls = [1, 2, 3, 4, 5].map((step) => ({ keys: [`${PREFIX}:counter-${step}`], args: [step] }));

  it('answers a script the server does not know yet, in order, by EVAL after the pipeline’s NOSCRIPT', async () => {
    expect(await script.runEach(redis, calls)).toEqual([1, 2, 3, 4, 5]);
  });

  it('sends the calls of a known script in one write and answers each in order', async () => {
    writes = 0;
    expect(await script.runEach(redis, calls)).toEqual([2, 4, 6, 8, 10]);
    expect(writes).toBe(1);
  });

  it("keeps one call's error to that call", async () => {
    const answers = await script.runEach(redis, [calls[0], { keys: [`${PREFIX}:counter-x`], args: ['fail'] }, calls[1]]);
    expect(answers[0]).toBe(3);
    expect(answers[1]).toBeInstanceOf(Error);
    expect((answers[1] as Error).message).toContain('asked to fail');
    expect(answers[2]).toBe(6);
  });
});
