import Redis from 'ioredis';
import { loadEnvironment, RedisKeys } from '@app/runtime';
import { EndpointAdmission, REUSE_WINDOW_MS, STUCK_CALL_MS } from '../../apps/delivery-worker/src/delivery/admission/endpoint-admission';
import { redisNowMs, untilRedisPasses } from '../support/redis-clock';
import { waitFor } from '@app/testing';
import { deleteKeysUnder, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('endpoint-admission');
const KEYS = new RedisKeys(PREFIX);

/** `count` workers' admissions sharing one Redis connection, each endpoint with `endpointConcurrency` slots. */
function workers(redis: Redis, count: number, endpointConcurrency: number): EndpointAdmission[] {
  const environment = loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: String(endpointConcurrency) });
  return Array.from({ length: count }, () => new EndpointAdmission(redis, environment, KEYS));
}

/** Its own connection to the same real Redis, counting the endpoint acquire scripts (the only ones with seven keys). */
function countingAcquires(): { redis: Redis; acquires: () => number } {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  let acquires = 0;
  const evalsha = redis.evalsha.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  (redis as unknown as { evalsha: (...args: unknown[]) => Promise<unknown> }).evalsha = (...args: unknown[]) => {
    if (args[1] === 7) acquires += 1;
    return evalsha(...args);
  };
  return { redis, acquires: () => acquires };
}

/**
 * Moves this process's clock (Date.now, which EndpointAdmission times its own calls with) `ms` ahead at
 * once, until the test ends: a call of this process looks that much older without the test sleeping, so
 * no other timer (a waiting job's own deadline) runs out meanwhile on a slow machine.
 */
function moveLocalClock(ms: number): void {
  const real = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => real() + ms);
}

/** EndpointAdmission on real Redis leases: the jobs that wait in the process for one of its leases. */
describe('EndpointAdmission, jobs waiting for a lease', () => {
  let redis: Redis;
  let admission: EndpointAdmission;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    admission = new EndpointAdmission(redis, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '1' }), KEYS);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await admission.stop();
    await deleteKeysUnder(PREFIX);
    redis.disconnect();
  });

  it('sends the waiting jobs back as soon as a call of their endpoint is seen stuck, not at their deadline', async () => {
    const call = { endpointKey: 'http://stuck.example|1|aaaa', force: false, maxPerSecond: null };
    const first = await admission.acquire(call);
    expect(first.kind).toBe('admitted');
    // The endpoint's one slot is taken by a call of this process: the next job waits for it here.
    let waiterOutcome: string | null = null;
    const waiter = admission.acquire(call).then((answer) => (waiterOutcome = answer.kind));
    await new Promise((resolve) => setImmediate(resolve));
    expect(waiterOutcome).toBeNull();

    // The call has now run past the stuck threshold: the next job is sent back, and so is the waiter.
    moveLocalClock(STUCK_CALL_MS + 100);
    expect(waiterOutcome).toBeNull();
    expect((await admission.acquire(call)).kind).toBe('busy');
    await new Promise((resolve) => setImmediate(resolve));
    expect(waiterOutcome).toBe('busy');
    await waiter;
    if (first.kind === 'admitted') await admission.release(first.lease, 'neutral', null);
  });

  it('lets no more jobs ask Redis at once than the endpoint has slots: a burst waits here for the leases coming back', async () => {
    const { redis: counted, acquires } = countingAcquires();
    const burst = new EndpointAdmission(counted, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '2' }), KEYS);
    try {
      const call = { endpointKey: 'http://burst.example|1|aaaa', force: false, maxPerSecond: null };
      const kinds = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const answer = await burst.acquire(call);
          if (answer.kind === 'admitted') {
            await new Promise((resolve) => setImmediate(resolve));
            await burst.release(answer.lease, 'success', null, 1);
          }
          return answer.kind;
        }),
      );
      expect(kinds).toEqual(Array.from({ length: 10 }, () => 'admitted'));
      // Two asked (the endpoint's two slots); the other eight got those leases handed over as calls ended.
      expect(acquires()).toBe(2);
    } finally {
      await burst.stop();
      counted.disconnect();
    }
  });

  it("gives a lease back to Redis, instead of passing it to its own waiting job, while it holds more than its share of an endpoint another worker wants; the other worker's poll takes it", async () => {
    const counted = countingAcquires();
    const environment = loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '3' });
    const first = new EndpointAdmission(counted.redis, environment, KEYS);
    const [second, third] = workers(redis, 2, 3);
    const call = { endpointKey: 'http://two-workers.example|1|aaaa', force: false, maxPerSecond: null };
    const leases = KEYS.leases(call.endpointKey);
    try {
      const [a1, a2, b1] = [await first.acquire(call), await first.acquire(call), await second.acquire(call)];
      // The endpoint is full. A third worker, holding none of it, is refused, marked as wanting it, and polls.
      const polled = third.acquire(call);
      await waitFor('the third worker marked as wanting the endpoint', async () => (await redis.zcard(KEYS.wanting(call.endpointKey))) > 0);
      // The first worker's next job is refused too, and learns its share: 3 slots / 2 workers wanting = 1. It waits here.
      let waiterGot: string | null = null;
      const waiter = first.acquire(call).then((answer) => {
        waiterGot = answer.kind;
        return answer;
      });
      await waitFor('the first worker’s next job to have asked Redis', () => counted.acquires() >= 3);
      await new Promise((resolve) => setImmediate(resolve));
      expect(waiterGot).toBeNull();
      // A call of the first worker ends: holding 2 where its share is 1, its lease goes back to Redis...
      if (a1.kind !== 'admitted') throw new Error(`expected a lease, got ${a1.kind}`);
      await first.release(a1.lease, 'success', null, 1);
      // ...not to its own waiting job, which still waits: the third worker's poll takes the slot.
      const third1 = await polled;
      expect(third1.kind).toBe('admitted');
      expect(waiterGot).toBeNull();
      expect(await redis.zcard(leases)).toBe(3);
      expect((await waiter).kind).toBe('busy');
      for (const [admission, answer] of [[first, a2], [second, b1], [third, third1]] as const) if (answer.kind === 'admitted') await admission.release(answer.lease, 'neutral', null);
    } finally {
      await Promise.all([first, second, third].map((admission) => admission.stop()));
      counted.redis.disconnect();
    }
  });

  it('asks Redis again for the slots other workers give back while it holds fewer than its share, instead of letting its jobs all wait on its own lease', async () => {
    const counted = countingAcquires();
    const [other] = workers(redis, 1, 3);
    const mine = new EndpointAdmission(counted.redis, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '3' }), KEYS);
    const call = { endpointKey: 'http://given-back.example|1|aaaa', force: false, maxPerSecond: null };
    try {
      const otherLeases = [await other.acquire(call), await other.acquire(call)];
      const own = await mine.acquire(call);
      if (own.kind !== 'admitted') throw new Error(`expected a lease, got ${own.kind}`);
      // Three more jobs here find every slot taken: one of the three held here, two by the other worker.
      const admitted: string[] = [];
      const jobs = [1, 2, 3].map(() =>
        mine.acquire(call).then((answer) => {
          if (answer.kind === 'admitted') admitted.push(answer.lease.id);
          return answer;
        }),
      );
      // Refused by Redis (an ask besides its own call's), they wait.
      await waitFor('a job here to have asked Redis and been refused', () => counted.acquires() >= 2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(admitted).toHaveLength(0);
      // The other worker's calls end. This process's own call is still running, so only asking Redis
      // brings the two slots: waiting for its own lease would keep them waiting to their deadline.
      const asksBefore = counted.acquires();
      for (const answer of otherLeases) if (answer.kind === 'admitted') await other.release(answer.lease, 'neutral', null);
      await waitFor('two of the jobs admitted', () => admitted.length >= 2);
      expect(admitted).toHaveLength(2);
      // Admitted by asking Redis again, not by a lease of its own coming back.
      expect(counted.acquires()).toBeGreaterThanOrEqual(asksBefore + 2);
      await mine.release(own.lease, 'neutral', null);
      for (const answer of await Promise.all(jobs)) if (answer.kind === 'admitted') await mine.release(answer.lease, 'neutral', null);
    } finally {
      await Promise.all([other.stop(), mine.stop()]);
      counted.redis.disconnect();
    }
  });

  it("polls for a slot other workers hold instead of going back at once, but not when their calls look stuck", async () => {
    const counted = countingAcquires();
    const environment = loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '1' });
    const holder = new EndpointAdmission(counted.redis, environment, KEYS);
    const asker = new EndpointAdmission(counted.redis, environment, KEYS);
    const call = { endpointKey: 'http://held-elsewhere.example|1|aaaa', force: false, maxPerSecond: null };
    try {
      const held = await holder.acquire(call);
      if (held.kind !== 'admitted') throw new Error(`expected a lease, got ${held.kind}`);
      // The holder's call ends while the asker, refused, polls: the asker gets the slot.
      const asksBefore = counted.acquires();
      const asked = asker.acquire(call);
      await waitFor('the asker to have been refused and asked again', () => counted.acquires() >= asksBefore + 2);
      await holder.release(held.lease, 'neutral', null);
      const got = await asked;
      expect(got.kind).toBe('admitted');
      // Now the asker's call runs past STUCK_CALL_MS (Redis's clock, which ages the leases): the holder,
      // refused, goes back at once instead of polling: one ask, none after it.
      await untilRedisPasses(redis, (await redisNowMs(redis)) + STUCK_CALL_MS, 'the asker’s call being stuck');
      const asksThen = counted.acquires();
      expect((await holder.acquire(call)).kind).toBe('busy');
      expect(counted.acquires()).toBe(asksThen + 1);
      if (got.kind === 'admitted') await asker.release(got.lease, 'neutral', null);
    } finally {
      await Promise.all([holder.stop(), asker.stop()]);
      counted.redis.disconnect();
    }
  });

  it("expects an endpoint it has not timed yet to answer like the process's other endpoints: a first burst waits here instead of going back", async () => {
    const timed = new EndpointAdmission(redis, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '1' }), KEYS);
    try {
      // Calls to another endpoint took 2 ms each.
      const known = { endpointKey: 'http://timed.example|1|aaaa', force: false, maxPerSecond: null };
      for (let call = 0; call < 20; call += 1) {
        const answer = await timed.acquire(known);
        if (answer.kind !== 'admitted') throw new Error(`expected a lease, got ${answer.kind}`);
        await timed.release(answer.lease, 'success', null, 2);
      }
      // Thirty jobs, one after the other, for a new endpoint with one slot, whose first call lasts until
      // all have come: expected to take ~2 ms each, every one waits here for the slot.
      const fresh = { endpointKey: 'http://fresh.example|1|bbbb', force: false, maxPerSecond: null };
      let allCame: () => void = () => undefined;
      const cameAll = new Promise<void>((resolve) => (allCame = resolve));
      const jobs: Promise<string>[] = [];
      for (let job = 0; job < 30; job += 1) {
        jobs.push(
          timed.acquire(fresh).then(async (answer) => {
            if (answer.kind === 'admitted') {
              await cameAll;
              await timed.release(answer.lease, 'success', null, 2);
            }
            return answer.kind;
          }),
        );
        await new Promise((resolve) => setImmediate(resolve));
      }
      allCame();
      const kinds = await Promise.all(jobs);
      // With a fixed 100 ms guess only ten could wait (ten × 100 ms fills the 1 s bound): nineteen went back.
      expect(kinds.filter((kind) => kind === 'admitted')).toHaveLength(30);
    } finally {
      await timed.stop();
    }
  });

  it('spaces the jobs it sends back for an endpoint by its stuck call, its own or another worker\'s, not by the calls that ended', async () => {
    const [holder, other] = workers(redis, 2, 1);
    const call = { endpointKey: 'http://hangs.example|1|aaaa', force: false, maxPerSecond: null };
    try {
      const held = await holder.acquire(call);
      expect(held.kind).toBe('admitted');
      // The endpoint's one call has run 1.7 s (past the lease's reuse window and the stuck bound): no slot
      // frees before it ends, so jobs sent back are lined up a call's age apart, not the 100 ms expected of
      // an endpoint nobody has timed (which would bring five of them back within half a second).
      // At least 1.7 s by Redis's clock (the lease's age), read after the call started; this machine's is the same one.
      await untilRedisPasses(redis, (await redisNowMs(redis)) + REUSE_WINDOW_MS + STUCK_CALL_MS + 200, 'the call’s 1.7 s');
      const here = Array.from({ length: 5 }, () => holder.busyDelayMs(call.endpointKey));
      expect(Math.max(...here)).toBeGreaterThan(4 * 1_700 * 0.9);
      // Another worker knows the call only from Redis's answer (the age of the oldest lease).
      const refused = await other.acquire(call);
      if (refused.kind !== 'busy') throw new Error(`expected busy, got ${refused.kind}`);
      const there = Array.from({ length: 5 }, () => other.busyDelayMs(call.endpointKey, null, refused.oldestCallMs));
      expect(Math.max(...there)).toBeGreaterThan(4 * (1_700 - REUSE_WINDOW_MS) * 0.9);
      if (held.kind === 'admitted') await holder.release(held.lease, 'neutral', null);
    } finally {
      await Promise.all([holder.stop(), other.stop()]);
    }
  });

  it("answers from memory while an endpoint's breaker is open: of ten jobs only the two its slots let ask go to Redis, and none is sent back as busy", async () => {
    const { redis: counted, acquires } = countingAcquires();
    const breaking = new EndpointAdmission(counted, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '2', BREAKER_FAILURE_THRESHOLD: '1' }), KEYS);
    try {
      const call = { endpointKey: 'http://opens.example|1|aaaa', force: false, maxPerSecond: null };
      const first = await breaking.acquire(call);
      if (first.kind !== 'admitted') throw new Error(`expected a lease, got ${first.kind}`);
      expect((await breaking.release(first.lease, 'failure', 'HTTP 500', 5)).change).toBe('opened');
      const before = acquires();
      // Two ask (the endpoint's two slots) and learn the breaker is open; the eight waiting for them are told without asking.
      const answers = await Promise.all(Array.from({ length: 10 }, () => breaking.acquire(call)));
      expect(answers.map((answer) => answer.kind)).toEqual(Array.from({ length: 10 }, () => 'open'));
      expect(acquires() - before).toBe(2);
      // A manual redelivery's first call still asks: it passes an open breaker.
      const forced = await breaking.acquire({ ...call, force: true });
      expect(forced.kind).toBe('admitted');
      expect(acquires() - before).toBe(3);
      if (forced.kind === 'admitted') await breaking.release(forced.lease, 'success', null, 5);
      // Its success closed the breaker: the next job is admitted, not told it is open from memory.
      const after = await breaking.acquire(call);
      expect(after.kind).toBe('admitted');
      if (after.kind === 'admitted') await breaking.release(after.lease, 'success', null, 5);
    } finally {
      await breaking.stop();
      counted.disconnect();
    }
  });
});
