import Redis from 'ioredis';
import { loadEnvironment } from '@app/runtime';
import { EndpointAdmission, STUCK_CALL_MS } from '../apps/delivery-worker/src/delivery/admission/endpoint-admission';
import { deleteKeysUnder, useOwnRedisPrefix } from './support/worker-process';

const PREFIX = useOwnRedisPrefix('endpoint-admission');

/** EndpointAdmission on real Redis leases: the jobs that wait in the process for one of its leases. */
describe('EndpointAdmission, jobs waiting for a lease', () => {
  let redis: Redis;
  let admission: EndpointAdmission;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    admission = new EndpointAdmission(redis, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '1' }));
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
    await new Promise((resolve) => setTimeout(resolve, STUCK_CALL_MS + 100));
    expect(waiterOutcome).toBeNull();
    expect((await admission.acquire(call)).kind).toBe('busy');
    await new Promise((resolve) => setImmediate(resolve));
    expect(waiterOutcome).toBe('busy');
    await waiter;
    if (first.kind === 'admitted') await admission.release(first.lease, 'neutral', null);
  });

  it('lets no more jobs ask Redis at once than the endpoint has slots: a burst waits here for the leases coming back', async () => {
    // The same real Redis, with the endpoint acquire scripts (the only ones with five keys) counted.
    const counted = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    let acquires = 0;
    const evalsha = counted.evalsha.bind(counted) as (...args: unknown[]) => Promise<unknown>;
    (counted as unknown as { evalsha: (...args: unknown[]) => Promise<unknown> }).evalsha = (...args: unknown[]) => {
      if (args[1] === 5) acquires += 1;
      return evalsha(...args);
    };
    const burst = new EndpointAdmission(counted, loadEnvironment({ ...process.env, ENDPOINT_CONCURRENCY: '2' }));
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
      expect(acquires).toBe(2);
    } finally {
      await burst.stop();
      counted.disconnect();
    }
  });
});
