import Redis from 'ioredis';
import { listOpenEndpoints, readEndpointPace, RedisKeys } from '@app/runtime';
import { acquireEndpointLease, indexBreakerChange, releaseEndpointLease } from '../../apps/delivery-worker/src/delivery/admission/lease-scripts';
import { DECREASE_EVERY_MS } from '../../apps/delivery-worker/src/delivery/admission/pace-schedule';
import { redisNowMs, untilRedisPasses } from '../support/redis-clock';
import { deleteKeysUnder, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('endpoint-state');
const KEYS = new RedisKeys(PREFIX);

describe('endpoint state in Redis: the open-endpoint index and forced calls', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  });

  afterAll(async () => {
    await deleteKeysUnder(PREFIX);
    redis.disconnect();
  });

  /** Opens the breaker of `endpoint` the way a worker does: two failed calls with a threshold of 2. */
  async function open(endpoint: string, cooldownMs = 60_000): Promise<void> {
    for (const id of ['x', 'y']) {
      expect((await acquireEndpointLease(redis, KEYS, endpoint, { id: `${endpoint}-${id}`, ttlMs: 5000, limit: 5 })).verdict).toBe('acquired');
    }
    for (const id of ['x', 'y']) {
      const answer = await releaseEndpointLease(redis, KEYS, endpoint, {
        leaseId: `${endpoint}-${id}`,
        signal: 'failure',
        failureThreshold: 2,
        cooldownMs,
        error: `HTTP 503 from ${endpoint}`,
      });
      await indexBreakerChange(redis, KEYS, endpoint, answer.change);
    }
  }

  it('lists endpoints whose breaker is open, newest first, and drops members whose breaker closed or vanished', async () => {
    expect(await listOpenEndpoints(redis, KEYS)).toEqual([]);
    await open('http://first.example');
    // The index orders by the time of opening: the second opens a millisecond later on Redis's clock.
    await untilRedisPasses(redis, await redisNowMs(redis), 'the first opening’s millisecond');
    await open('http://second.example');

    const listed = await listOpenEndpoints(redis, KEYS);
    expect(listed.map((item) => item.endpoint)).toEqual(['http://second.example', 'http://first.example']);
    expect(listed[0].breaker).toMatchObject({ state: 'open', consecutive_failures: 2, last_error: 'HTTP 503 from http://second.example' });
    expect(await listOpenEndpoints(redis, KEYS, 1)).toHaveLength(1);

    // A success closes the first breaker: the worker removes it from the index.
    expect((await acquireEndpointLease(redis, KEYS, 'http://first.example', { id: 'p', ttlMs: 5000, limit: 5, force: true })).verdict).toBe('acquired');
    const closed = await releaseEndpointLease(redis, KEYS, 'http://first.example', {
      leaseId: 'p',
      signal: 'success',
      failureThreshold: 2,
      cooldownMs: 60_000,
      error: null,
    });
    expect(closed.change).toBe('closed');
    await indexBreakerChange(redis, KEYS, 'http://first.example', closed.change);
    expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).toEqual(['http://second.example']);

    // A member whose breaker hash is gone (expired, or Redis lost it) is dropped from the index when listed.
    const keys = new RedisKeys(PREFIX);
    await redis.sadd(keys.openEndpoints(), 'http://gone.example');
    expect((await listOpenEndpoints(redis, KEYS)).map((item) => item.endpoint)).toEqual(['http://second.example']);
    expect(await redis.sismember(keys.openEndpoints(), 'http://gone.example')).toBe(0);
  });

  it('lets a forced call (a manual redelivery) through an open breaker without turning it half open', async () => {
    const endpoint = 'http://forced.example';
    await open(endpoint);
    expect((await acquireEndpointLease(redis, KEYS, endpoint, { id: 'plain', ttlMs: 5000, limit: 1 })).verdict).toBe('open');
    const forced = await acquireEndpointLease(redis, KEYS, endpoint, { id: 'forced', ttlMs: 5000, limit: 1, force: true });
    expect(forced.verdict).toBe('acquired');
    expect(await redis.hget(KEYS.breaker(endpoint), 'state')).toBe('open');
    // The concurrency limit still holds for forced calls.
    expect((await acquireEndpointLease(redis, KEYS, endpoint, { id: 'forced-2', ttlMs: 5000, limit: 1, force: true })).verdict).toBe('busy');
    // A failed forced call leaves the breaker open (it only counts).
    const failed = await releaseEndpointLease(redis, KEYS, endpoint, {
      leaseId: 'forced',
      signal: 'failure',
      failureThreshold: 2,
      cooldownMs: 60_000,
      error: 'still down',
    });
    expect(failed).toMatchObject({ change: 'counted', consecutiveFailures: 3 });
    expect((await listOpenEndpoints(redis, KEYS)).some((item) => item.endpoint === endpoint)).toBe(true);
  });

  it('halves the pace on a 503 while the breaker is closed, not on a refused probe, and climbs back by a quarter of the ceiling per second of successes', async () => {
    const endpoint = 'http://paced.example|1|aaaa';
    // `asProbe`: the call is the delivery the worker sent as the probe (CONTRACT §5: only it may end a cooldown).
    const call = async (id: string, signal: 'success' | 'failure', slow: boolean, asProbe = false) => {
      let acquired = await acquireEndpointLease(redis, KEYS, endpoint, { id, ttlMs: 5000, limit: 5, mayProbe: asProbe });
      // A paced endpoint: wait for the call's place, as a worker's job would.
      while (acquired.verdict === 'paced') {
        await new Promise((resolve) => setTimeout(resolve, Math.max(1, acquired.until - acquired.serverNow)));
        acquired = await acquireEndpointLease(redis, KEYS, endpoint, { id, ttlMs: 5000, limit: 5, mayProbe: asProbe });
      }
      expect(['acquired', 'probe']).toContain(acquired.verdict);
      return releaseEndpointLease(redis, KEYS, endpoint, {
        leaseId: id,
        signal,
        failureThreshold: 2,
        cooldownMs: 1,
        error: slow ? 'HTTP 503' : null,
        slowDown: slow ? { retryAfterMs: null } : null,
      });
    };
    // Closed breaker: the 503 halves the unpaced start (100 a second).
    await call('first-503', 'failure', true);
    const firstCutBy = await redisNowMs(redis);
    expect(await readEndpointPace(redis, KEYS, endpoint, null)).toBe(50);
    // A second 503 opens the breaker; it comes within the same second, so the pace is one signal and stays.
    expect((await call('second-503', 'failure', true)).change).toBe('opened');
    expect(await readEndpointPace(redis, KEYS, endpoint, null)).toBe(50);
    // Past the cooldown and the once-a-second limit, the half-open probe is refused too: the breaker
    // reopens, the pace is left where it was.
    await untilRedisPasses(redis, firstCutBy + DECREASE_EVERY_MS, 'the once-a-second limit of pace cuts');
    // Past the cooldown a call that was not sent as the probe is still held (the breaker holds, CONTRACT §5).
    expect((await acquireEndpointLease(redis, KEYS, endpoint, { id: 'not-the-probe', ttlMs: 5000, limit: 5 })).verdict).toBe('open');
    expect((await call('probe-503', 'failure', true, true)).change).toBe('opened');
    expect(await readEndpointPace(redis, KEYS, endpoint, null)).toBe(50);
    // Successes climb by 25 calls a second per second: each one by 25 / rate.
    await untilRedisPasses(redis, await redisNowMs(redis), 'the refused probe’s millisecond');
    expect((await call('probe-ok', 'success', false, true)).change).toBe('closed');
    expect(await readEndpointPace(redis, KEYS, endpoint, null)).toBeCloseTo(50.5, 6);
    // From 50.5 to the ceiling: the rate's square grows by 2 × 25 per success, so about 150 calls
    // (a step of ceiling / 10 would take 373).
    let successes = 0;
    while ((await readEndpointPace(redis, KEYS, endpoint, null)) !== null && successes < 400) {
      successes += 1;
      await call(`ok-${successes}`, 'success', false);
    }
    expect(successes).toBeGreaterThanOrEqual(140);
    expect(successes).toBeLessThanOrEqual(155);
  });

  it('caps calls per origin across endpoints and gives the next free slot to the endpoint holding less', async () => {
    const origin = 'http://shared-origin.example';
    const first = `${origin}|1|aaaa`;
    const second = `${origin}|2|bbbb`;
    const take = (endpoint: string, id: string) => acquireEndpointLease(redis, KEYS, endpoint, { id, ttlMs: 5000, limit: 10, originLimit: 4 });
    const give = (endpoint: string, leaseId: string) =>
      releaseEndpointLease(redis, KEYS, endpoint, { leaseId, signal: 'success', failureThreshold: 5, cooldownMs: 1000, error: null });

    // Alone at the origin, the first endpoint may use all of it, but not more.
    for (const id of ['f1', 'f2', 'f3', 'f4']) expect((await take(first, id)).verdict).toBe('acquired');
    expect((await take(first, 'f5')).verdict).toBe('busy');
    // The second endpoint finds the origin full and is now waiting for it.
    expect((await take(second, 's1')).verdict).toBe('busy');
    // A slot frees: the first endpoint, holding more than its share (4 / 2), does not get it back...
    await give(first, 'f1');
    expect((await take(first, 'f6')).verdict).toBe('busy');
    // ...the waiting endpoint does.
    expect((await take(second, 's1')).verdict).toBe('acquired');
    // Slots of the origin are freed by release too: the first endpoint gets room again once the second is served.
    await give(second, 's1');
    await give(first, 'f2');
    expect((await take(second, 's2')).verdict).toBe('acquired');
    expect((await take(first, 'f7')).verdict).toBe('acquired');
    expect(await redis.zcard(KEYS.originLeases(origin))).toBe(4);
  });

  it("shares an endpoint's slots between the workers that want it: one holding its share gets no more while another is refused", async () => {
    const endpoint = 'http://shared-endpoint.example|3|cccc';
    const take = (worker: string, n: number) => acquireEndpointLease(redis, KEYS, endpoint, { id: `${worker}:${n}`, ttlMs: 5000, limit: 4, worker });
    const give = (worker: string, n: number) =>
      releaseEndpointLease(redis, KEYS, endpoint, { leaseId: `${worker}:${n}`, signal: 'success', failureThreshold: 5, cooldownMs: 1000, error: null });

    // Worker a alone may hold every slot, and is told of no share.
    for (const n of [1, 2, 3, 4]) expect(await take('a', n)).toMatchObject({ verdict: 'acquired', workerShare: null });
    // Worker b finds the endpoint full: refused, and now marked as wanting it.
    expect(await take('b', 1)).toMatchObject({ verdict: 'busy' });
    // A slot frees. Worker a, holding 3 where its share is 4 / 2, does not get it back, and learns its share...
    await give('a', 1);
    expect(await take('a', 5)).toMatchObject({ verdict: 'busy', workerShare: 2 });
    // ...worker b does.
    expect(await take('b', 2)).toMatchObject({ verdict: 'acquired', workerShare: 2 });
    // Worker a goes down to its share; the slot it frees goes to b, which then holds its share and wants no more.
    await give('a', 2);
    expect(await take('b', 3)).toMatchObject({ verdict: 'acquired', workerShare: 2 });
    await give('a', 3);
    expect(await take('a', 6)).toMatchObject({ verdict: 'acquired', workerShare: null });
    expect(await take('b', 4)).toMatchObject({ verdict: 'busy' });
    const holders = (await redis.zrange(KEYS.leases(endpoint), 0, -1)).map((id) => id.split(':')[0]).sort();
    expect(holders).toEqual(['a', 'a', 'b', 'b']);
    // Calls without a worker id (no sharing) still obey the endpoint's limit.
    expect((await acquireEndpointLease(redis, KEYS, endpoint, { id: 'anonymous', ttlMs: 5000, limit: 4 })).verdict).toBe('busy');
  });

  it("gives a paced endpoint's free slot to whichever worker asks, share or no share (its leases are never kept for reuse)", async () => {
    const endpoint = 'http://paced-shared-endpoint.example|3|dddd';
    // A high pace, so the schedule never holds these calls back: only the slots decide.
    const take = (worker: string, n: number) =>
      acquireEndpointLease(redis, KEYS, endpoint, { id: `${worker}:${n}`, ttlMs: 5000, limit: 4, worker, maxPerSecond: 10_000, job: `${worker}-job-${n}` });
    const give = (worker: string, n: number) =>
      releaseEndpointLease(redis, KEYS, endpoint, { leaseId: `${worker}:${n}`, signal: 'success', failureThreshold: 5, cooldownMs: 1000, error: null, maxPerSecond: 10_000 });

    for (const n of [1, 2, 3, 4]) expect(await take('a', n)).toMatchObject({ verdict: 'acquired' });
    expect(await take('b', 1)).toMatchObject({ verdict: 'busy' });
    // A slot frees: worker a, holding 3 of 4 while b wants the endpoint, still gets it (unpaced, a's share of 2 would refuse it).
    await give('a', 1);
    expect(await take('a', 5)).toMatchObject({ verdict: 'acquired' });
    // The limit itself holds for both.
    expect(await take('b', 2)).toMatchObject({ verdict: 'busy' });
    await give('a', 2);
    expect(await take('b', 3)).toMatchObject({ verdict: 'acquired' });
    expect((await redis.zcard(KEYS.leases(endpoint)))).toBe(4);
  });
});
