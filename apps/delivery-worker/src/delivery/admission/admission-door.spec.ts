import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { endpointKeyOf, type Environment, loadEnvironment, RedisKeys } from '@app/runtime';
import { WorkerStoppingError } from '../worker-stopping-error';
import { AdmissionDoor, type AdmitRequest, type CallOutcome, type Entry, type Lease } from './admission-door';
import { EndpointAdmission } from './endpoint-admission';
import { NEAR_PLACE_MS, STUCK_CALL_MS } from './endpoint-timing';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A prefix of this run alone: the spec may run beside a CI run on the same Redis. */
const PREFIX = `admission-door-spec-${randomUUID()}`;
const KEYS = new RedisKeys(PREFIX);

const SUCCESS: CallOutcome = { signal: 'success', error: null, durationMs: 20, slowDown: null };
const NEUTRAL: CallOutcome = { signal: 'neutral', error: null, durationMs: null, slowDown: null };

function failure(error: string): CallOutcome {
  return { signal: 'failure', error, durationMs: 20, slowDown: null };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The promise's value if it settles within `ms`, else 'pending'. */
function within<T>(promise: Promise<T>, ms = 100): Promise<T | 'pending'> {
  return Promise.race([promise, sleep(ms).then(() => 'pending' as const)]);
}

function request(endpointKey: string | null, job: string, options: Partial<AdmitRequest> = {}): AdmitRequest {
  return { job, endpointKey, force: false, probe: false, maxPerSecond: null, ...options };
}

function leaseOf(entry: Entry): Lease {
  if (entry.kind !== 'admitted') throw new Error(`expected the call to be admitted, got ${JSON.stringify(entry)}`);
  return entry.lease;
}

/** Each test its own endpoint (and origin), so no breaker, lease or pace leaks from one test into the next. */
function endpoint(name: string): string {
  return endpointKeyOf(1, `http://${name}.admission-door.example/hook`);
}

async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

describe('AdmissionDoor on real Redis leases', () => {
  let redis: Redis;
  const doors: AdmissionDoor[] = [];
  const ownClients: Redis[] = [];

  function doorWith(settings: Record<string, string>, client: Redis = redis): AdmissionDoor {
    // Only the settings named here: the machine's own environment must not change what a test sees.
    const environment: Environment = loadEnvironment({ REDIS_URL, REDIS_PREFIX: PREFIX, ...settings });
    const door = new AdmissionDoor(new EndpointAdmission(client, environment, KEYS), environment);
    doors.push(door);
    return door;
  }

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });

  beforeEach(() => {
    // The door logs breaker changes and failed releases; the tests assert them instead of printing them.
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    await Promise.all(doors.splice(0).map((door) => door.stop()));
    // A second disconnect of a closed client leaves ioredis's 2 s socket timer running past the suite.
    for (const client of ownClients.splice(0)) if (client.status !== 'end') client.disconnect();
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await deleteKeysUnder(redis, PREFIX);
    redis.disconnect();
  });

  it('admits up to ENDPOINT_CONCURRENCY calls, each on its own Redis lease, then sends the next job back as busy', async () => {
    const door = doorWith({ ENDPOINT_CONCURRENCY: '2' });
    const key = endpoint('busy');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    const second = leaseOf(await door.admit(request(key, 'job-2')));
    expect(first.held?.id).toBeDefined();
    expect(first.held?.id).not.toBe(second.held?.id);
    expect(await redis.zrange(KEYS.leases(key), 0, -1)).toEqual(expect.arrayContaining([first.held?.id, second.held?.id]));

    // Fresh calls would make the third job wait here for one of their leases; once they run past
    // STUCK_CALL_MS no job waits on them, so it goes back through the delayed set at once.
    await sleep(STUCK_CALL_MS + 50);
    const third = await door.admit(request(key, 'job-3'));
    expect(third).toEqual({ kind: 'wait', ms: expect.any(Number), reason: 'busy' });
    expect(third.kind === 'wait' ? third.ms : -1).toBeGreaterThan(0);
    expect(await redis.zcard(KEYS.leases(key))).toBe(2);

    // Still full with this process's own calls: the job is sent back again without loading anything.
    expect(door.waitBeforeLoad('job-3')).toBeGreaterThan(0);
    expect(door.waitBeforeLoad('job-never-seen')).toBeNull();

    expect(await door.release(first, SUCCESS)).toBeNull();
    expect(door.waitBeforeLoad('job-3')).toBeNull();
    const fourth = leaseOf(await door.admit(request(key, 'job-3')));
    expect(fourth.endpointKey).toBe(key);
    await door.release(second, NEUTRAL);
    await door.release(fourth, NEUTRAL);
  });

  it('hands the lease of a call that ends to a job of this process waiting for the full endpoint', async () => {
    const door = doorWith({ ENDPOINT_CONCURRENCY: '1' });
    const key = endpoint('handover');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    const waiting = door.admit(request(key, 'job-2'));
    expect(await within(waiting)).toBe('pending');

    expect(await door.release(first, SUCCESS)).toBeNull();
    const second = leaseOf(await waiting);
    // Passed on in the process without a Redis round trip: the same lease, still the only one.
    expect(second.held?.id).toBe(first.held?.id);
    expect(await redis.zcard(KEYS.leases(key))).toBe(1);
    await door.release(second, NEUTRAL);
    expect(await redis.zcard(KEYS.leases(key))).toBe(0);
  });

  it("makes a job wait for its place in the endpoint's pace (max_per_second), and a forced call too", async () => {
    const door = doorWith({});
    const key = endpoint('paced');
    const first = leaseOf(await door.admit(request(key, 'job-1', { maxPerSecond: 1 })));

    const second = await door.admit(request(key, 'job-2', { maxPerSecond: 1 }));
    expect(second).toEqual({ kind: 'wait', ms: expect.any(Number), reason: 'paced' });
    // Its place is one interval (1 s) after the first call's start; it comes back NEAR_PLACE_MS ahead of it.
    const ms = second.kind === 'wait' ? second.ms : -1;
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(1_000 - NEAR_PLACE_MS + 1);
    expect(await redis.zscore(KEYS.pacePlaces(key), 'job-2')).not.toBeNull();
    // The pace, not the concurrency, held it: only the first call holds a lease.
    expect(await redis.zcard(KEYS.leases(key))).toBe(1);

    expect(await door.admit(request(key, 'job-3', { maxPerSecond: 1, force: true }))).toMatchObject({ kind: 'wait', reason: 'paced' });
    await door.release(first, SUCCESS);
  });

  it('opens the breaker at BREAKER_FAILURE_THRESHOLD failures; then admit answers open and admits nothing', async () => {
    const door = doorWith({ BREAKER_FAILURE_THRESHOLD: '2', BREAKER_COOLDOWN: '30s', WORKER_CONCURRENCY: '1' });
    const key = endpoint('failing');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    expect(await door.release(first, failure('HTTP 500: server error'))).toBeNull();
    // One failure below the threshold still lets calls through.
    const second = leaseOf(await door.admit(request(key, 'job-2')));
    const openedAt = Date.now();
    expect(await door.release(second, failure('time-out: no answer within 100 ms'))).toEqual({ change: 'opened', consecutiveFailures: 2 });
    expect(Logger.prototype.warn).toHaveBeenCalledWith(expect.stringContaining('circuit opened'));
    expect(await redis.sismember(KEYS.openEndpoints(), key)).toBe(1);

    const held = await door.admit(request(key, 'job-3'));
    expect(held).toEqual({ kind: 'open', retryAt: expect.any(Date), consecutiveFailures: 2, lastError: 'time-out: no answer within 100 ms' });
    const retryInMs = held.kind === 'open' ? held.retryAt.getTime() - openedAt : -1;
    expect(retryInMs).toBeGreaterThan(29_000);
    expect(retryInMs).toBeLessThanOrEqual(30_500);
    // The answer given from memory says the same.
    expect(await door.admit(request(key, 'job-4'))).toMatchObject({ kind: 'open', consecutiveFailures: 2 });
    expect(await redis.zcard(KEYS.leases(key))).toBe(0);
    // No open answer kept the process's one call: an unkeyed call still gets it.
    const other = await within(door.admit(request(null, 'job-5')));
    expect(other).toEqual({ kind: 'admitted', lease: { endpointKey: null, held: null } });
  });

  it('lets a forced call through an open breaker; only its outcome changes the breaker', async () => {
    const door = doorWith({ BREAKER_FAILURE_THRESHOLD: '1', BREAKER_COOLDOWN: '30s' });
    const key = endpoint('forced');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    expect(await door.release(first, failure('HTTP 502: bad gateway'))).toEqual({ change: 'opened', consecutiveFailures: 1 });
    expect((await door.admit(request(key, 'job-2'))).kind).toBe('open');

    const forced = leaseOf(await door.admit(request(key, 'job-2', { force: true })));
    expect(forced.held).not.toBeNull();
    expect(await redis.zcard(KEYS.leases(key))).toBe(1);
    expect(await door.release(forced, NEUTRAL)).toBeNull();
    expect((await door.admit(request(key, 'job-3'))).kind).toBe('open');

    const again = leaseOf(await door.admit(request(key, 'job-3', { force: true })));
    expect(await door.release(again, SUCCESS)).toEqual({ change: 'closed', consecutiveFailures: 0 });
    // Closed by this process: the open breaker it remembered is forgotten at once.
    expect((await door.admit(request(key, 'job-4'))).kind).toBe('admitted');
  });

  it('after the cooldown admits only the probe; others wait for its verdict, and its success closes the breaker', async () => {
    const door = doorWith({ BREAKER_FAILURE_THRESHOLD: '1', BREAKER_COOLDOWN: '200ms' });
    const key = endpoint('probed');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    await door.release(first, failure('HTTP 503: service unavailable'));
    const open = await door.admit(request(key, 'job-2'));
    if (open.kind !== 'open') throw new Error(`expected open, got ${open.kind}`);
    await sleep(open.retryAt.getTime() - Date.now() + 30);

    // The cooldown is over, but only the delivery sent as the probe may end it.
    expect((await door.admit(request(key, 'job-2'))).kind).toBe('open');
    const probe = leaseOf(await door.admit(request(key, 'job-3', { probe: true })));
    expect(probe.held?.probe).toBe(true);

    const another = await door.admit(request(key, 'job-4', { probe: true }));
    expect(another).toEqual({ kind: 'wait', ms: expect.any(Number), reason: 'breaker_probing' });
    // At most the cooldown (but at least 250 ms), spread down to half.
    const ms = another.kind === 'wait' ? another.ms : -1;
    expect(ms).toBeGreaterThanOrEqual(125);
    expect(ms).toBeLessThanOrEqual(250);
    expect((await door.admit(request(key, 'job-5'))).kind).toBe('open');

    expect(await door.release(probe, SUCCESS)).toEqual({ change: 'closed', consecutiveFailures: 0 });
    expect(await redis.sismember(KEYS.openEndpoints(), key)).toBe(0);
    expect((await door.admit(request(key, 'job-5'))).kind).toBe('admitted');
  });

  it('opens the breaker again for another cooldown when the probe fails', async () => {
    const door = doorWith({ BREAKER_FAILURE_THRESHOLD: '1', BREAKER_COOLDOWN: '200ms' });
    const key = endpoint('probe-fails');
    await door.release(leaseOf(await door.admit(request(key, 'job-1'))), failure('HTTP 500: server error'));
    const open = await door.admit(request(key, 'job-2'));
    if (open.kind !== 'open') throw new Error(`expected open, got ${open.kind}`);
    await sleep(open.retryAt.getTime() - Date.now() + 30);

    const probe = leaseOf(await door.admit(request(key, 'job-2', { probe: true })));
    expect(await door.release(probe, failure('connection failed: ECONNREFUSED'))).toEqual({ change: 'opened', consecutiveFailures: 2 });
    expect(await door.admit(request(key, 'job-3', { probe: true }))).toMatchObject({
      kind: 'open',
      consecutiveFailures: 2,
      lastError: 'connection failed: ECONNREFUSED',
    });
  });

  it('never throws on release: not when the Redis keys vanished, not when Redis cannot be reached', async () => {
    const door = doorWith({});
    const key = endpoint('vanished');
    const first = leaseOf(await door.admit(request(key, 'job-1')));
    const second = leaseOf(await door.admit(request(key, 'job-2')));
    await deleteKeysUnder(redis, PREFIX);
    await expect(door.release(first, failure('HTTP 500: server error'))).resolves.toBeNull();
    await expect(door.release(second, SUCCESS)).resolves.toBeNull();

    const client = new Redis(REDIS_URL);
    ownClients.push(client);
    const cut = doorWith({}, client);
    const unreachable = endpoint('unreachable');
    const lease = leaseOf(await cut.admit(request(unreachable, 'job-3')));
    client.disconnect();
    await expect(cut.release(lease, failure('time-out: no answer within 100 ms'))).resolves.toBeNull();
    expect(Logger.prototype.warn).toHaveBeenCalledWith(expect.stringContaining(`could not release the endpoint lease of ${unreachable}`));
  });

  it('admits a call without an endpoint key without a lease, holding one of the WORKER_CONCURRENCY calls until release', async () => {
    const door = doorWith({ WORKER_CONCURRENCY: '1' });
    const first = await door.admit(request(null, 'job-1'));
    expect(first).toEqual({ kind: 'admitted', lease: { endpointKey: null, held: null } });
    const second = door.admit(request(null, 'job-2'));
    expect(await within(second)).toBe('pending');
    expect(await door.release(leaseOf(first), failure('invalid push_url: the URL is not valid'))).toBeNull();
    expect(await second).toEqual({ kind: 'admitted', lease: { endpointKey: null, held: null } });
  });

  it('starts no call once stopCalls was called', async () => {
    const door = doorWith({});
    door.stopCalls();
    await expect(door.admit(request(null, 'job-1'))).rejects.toBeInstanceOf(WorkerStoppingError);
    await expect(door.admit(request(endpoint('stopping'), 'job-2'))).rejects.toBeInstanceOf(WorkerStoppingError);
  });
});
