import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { deliveryJobId, endpointKeyOf, type EndpointState, readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import { acquireEndpointLease, releaseEndpointLease } from '../../apps/delivery-worker/src/delivery/admission/lease-scripts';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryRunner } from '../../apps/delivery-worker/src/delivery/delivery-runner.service';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { useApps } from '../support/apps';
import { accountPushingTo } from '../support/fixtures';
import { TestReceiver, useReceivers } from '../support/receiver';
import { untilRedisPasses } from '../support/redis-clock';
import { waitFor } from '@app/testing';
import { primaryDeliveries } from '../support/model-deliveries';
import {
  attemptRows,
  deleteKeysUnder,
  deliveryQueueOf,
  enqueueFirstAttempts,
  eventRows,
  insertEvents,
  sendEvents,
  type StoredTestEvent,
  useOwnRedisPrefix,
  customerEvents,
} from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('delivery-isolation');
const KEYS = new RedisKeys(PREFIX);
// The e2e project's testTimeout is not applied per project; these tests wait on real retries and cooldowns.
jest.setTimeout(60_000);

const events = customerEvents;

/** A held delivery's last_error while its endpoint's breaker is open (CONTRACT §5, the breaker holds). */
const HELD_BY_BREAKER = /^circuit open since \d+ consecutive failures?, held until a probe succeeds \(probe after \S+Z\): time-out: no answer within 1000 ms$/;

describe('endpoint isolation, circuit breaker and reconciler', () => {
  const { configApi, worker } = useApps({
    configApi: ConfigApiModule,
    worker: [
      DeliveryWorkerModule,
      {
        WORKER_CONCURRENCY: '6',
        ENDPOINT_CONCURRENCY: '2',
        DELIVERY_TIMEOUT_MS: '1000',
        BREAKER_FAILURE_THRESHOLD: '3',
        BREAKER_COOLDOWN: '1s',
        // Enough retries that the dead endpoint's events are still pending while its breaker opens and probes.
        RETRY_SCHEDULE: Array.from({ length: 12 }, () => '500ms').join(','),
        RECONCILE_INTERVAL: '500ms',
      },
    ],
  });
  const receiver = useReceivers();

  const accountFor = async (target: TestReceiver): Promise<number> => (await accountPushingTo(configApi, worker.app, target)).id;

  async function statuses(stored: StoredTestEvent[]): Promise<string[]> {
    return (await eventRows(worker.app, stored.map((event) => event.eventId))).map((row) => row.status);
  }

  it('keeps a dead endpoint from holding back a healthy one, opens its breaker, and closes it after recovery', async () => {
    const dead = await receiver();
    let alive = false;
    let inFlight = 0;
    let mostInFlight = 0;
    dead.respondWith((_request, response) => {
      if (alive) {
        response.writeHead(200).end('ok');
        return;
      }
      // Never answers: the worker's deadline ends each call.
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      response.on('close', () => {
        inFlight -= 1;
      });
    });
    const healthy = await receiver();
    const deadAccount = await accountFor(dead);
    const healthyAccount = await accountFor(healthy);
    const deadEvents = await sendEvents(worker.app, deadAccount, events(24));
    const healthyEvents = await sendEvents(worker.app, healthyAccount, events(24));

    // A deadline for a loaded machine (jobs bounced as busy come back later there), naming what is left.
    await waitFor(
      'every healthy event to be delivered',
      async () => {
        const left = (await statuses(healthyEvents)).filter((status) => status !== 'delivered');
        if (left.length > 0) throw new Error(`not delivered yet: ${left.join(', ')}`);
        return true;
      },
      { timeoutMs: 60_000 },
    );
    // The dead endpoint's backlog, enqueued first, was not worked through before the healthy events:
    // it only ever got its bounded share of the workers.
    expect(dead.requests.length).toBeLessThan(deadEvents.length);
    expect((await statuses(deadEvents)).every((status) => status === 'queued' || status === 'retrying')).toBe(true);

    const redis = worker.app.get<Redis>(REDIS);
    const opened = await waitFor('the dead endpoint breaker to open', async () => {
      const state = await readEndpointState(redis, KEYS, deadAccount, dead.url);
      return state.state === 'open' ? state : undefined;
    });
    expect(opened.consecutive_failures).toBeGreaterThanOrEqual(3);
    expect(opened.last_error).toBe('time-out: no answer within 1000 ms');
    expect(Date.parse(opened.retry_at ?? '')).toBeGreaterThan(Date.parse(opened.opened_at ?? ''));
    expect(await readEndpointState(redis, KEYS, healthyAccount, healthy.url)).toMatchObject({ state: 'closed', consecutive_failures: 0 });

    // The breaker holds (CONTRACT §5): a delivery falling due while it is open waits, held in PostgreSQL
    // without a job, and says why; no call is made and no attempt recorded for it meanwhile.
    const deadIds = deadEvents.map((event) => event.eventId);
    const held = await waitFor('a delivery held by the open breaker', async () =>
      (await primaryDeliveries(worker.app.get(DataSource), deadIds)).find((row) => row.held === 'breaker' && HELD_BY_BREAKER.test(row.last_error ?? '')),
    );
    expect(['queued', 'retrying']).toContain(held.status);
    // After the cooldown one probe goes through; it times out too and re-opens the breaker.
    const seen = new Set<EndpointState['state']>();
    await waitFor(
      'a half-open probe, then the breaker open again',
      async () => {
        const { state } = await readEndpointState(redis, KEYS, deadAccount, dead.url);
        if (state === 'half_open') seen.add(state);
        return seen.has('half_open') && state === 'open';
      },
      { intervalMs: 20 },
    );

    expect(mostInFlight).toBeLessThanOrEqual(2);
    alive = true;
    // The first probe after the recovery closes the breaker and every held delivery goes: each event ends
    // delivered, or failed only after its 13 scheduled attempts were all made as calls and failed.
    await waitFor(
      'every event of the recovered endpoint to reach a final status',
      async () => (await statuses(deadEvents)).every((status) => status === 'delivered' || status === 'failed'),
      { timeoutMs: 30_000 },
    );
    expect(await readEndpointState(redis, KEYS, deadAccount, dead.url)).toMatchObject({ state: 'closed', consecutive_failures: 0, retry_at: null });
    const rows = await eventRows(worker.app, deadIds);
    for (const row of rows.filter((candidate) => candidate.status === 'failed')) expect(row.attempts).toBe(13);
    // No attempt was recorded without its call: every one carries the request it sent, none names the breaker.
    for (const row of rows) {
      const attempts = await attemptRows(worker.app, row.event_id);
      expect(attempts).toHaveLength(row.attempts);
      for (const attempt of attempts) {
        expect(attempt.error ?? '').not.toMatch(/circuit open/);
        expect(Object.keys(attempt.request_headers ?? {})).toContain('webhook-signature');
      }
    }
  });

  it('re-enqueues pending events whose jobs Redis lost, and events never enqueued at all', async () => {
    const target = await receiver();
    const accountId = await accountFor(target);
    const runner = worker.app.get(DeliveryRunner, { strict: false });
    await runner.pause();
    try {
      const queued = await sendEvents(worker.app, accountId, events(20));
      const neverEnqueued = await insertEvents(worker.app, accountId, events(5));
      const counts = await Promise.all(deliveryQueueOf(worker.app).all().map((queue) => queue.getJobCounts('wait', 'delayed', 'prioritized')));
      expect(counts.reduce((sum, count) => sum + count.wait + count.delayed + count.prioritized, 0)).toBeGreaterThanOrEqual(20);

      // Redis loses everything this worker had: queue, jobs, breaker and lease keys.
      expect(await deleteKeysUnder(PREFIX)).toBeGreaterThan(0);
      runner.resume();

      const all = [...queued, ...neverEnqueued];
      // The reconciler sees Redis's contents gone and first lets jobs taken before finish (a lock's duration, 11 s here).
      await waitFor('the reconciler to get every pending event delivered', async () => (await statuses(all)).every((status) => status === 'delivered'), {
        timeoutMs: 45_000,
      });
      expect(new Set(target.requests.map((request) => request.headers['webhook-id'])).size).toBe(all.length);
    } finally {
      runner.resume();
    }
  });

  it('leaves a job alone when its event has moved on (stale step)', async () => {
    const target = await receiver();
    const accountId = await accountFor(target);
    const [event] = await sendEvents(worker.app, accountId, events(1));
    await waitFor('delivery', async () => (await statuses([event]))[0] === 'delivered');
    // Compared with what the delivery itself took: on a loaded machine the receiver (this process) may
    // answer after the 1 s deadline once, and the event is delivered at its second attempt.
    const callsOf = () => target.requests.filter((request) => request.headers['webhook-id'] === event.eventId).length;
    const [calls, { attempts }] = [callsOf(), (await eventRows(worker.app, [event.eventId]))[0]];
    // The same step again, e.g. re-added by a reconciler racing the worker: nothing happens.
    const queue = deliveryQueueOf(worker.app);
    await enqueueFirstAttempts(queue, [event]);
    const jobId = deliveryJobId({ eventSeq: event.seq, series: 0, attempt: 0 });
    await waitFor('the repeated job to be processed (and removed)', async () => (await queue.queueFor(accountId).getJob(jobId)) === undefined);
    expect(callsOf()).toBe(calls);
    expect((await eventRows(worker.app, [event.eventId]))[0].attempts).toBe(attempts);
  });

  it('keeps breaker and leases in Redis: threshold, cooldown, single probe, lease expiry', async () => {
    const redis = worker.app.get<Redis>(REDIS);
    const url = `http://breaker-${Date.now()}.example:8080/hook`;
    const accountId = 7;
    const endpoint = endpointKeyOf(accountId, url);
    // Short lease and cooldown, yet long enough that the commands checking them before they end are not
    // a race against the machine's speed; their end is waited for on Redis's clock, which measures them.
    const SHORT_MS = 1_500;
    // `mayProbe`: the call is the delivery the worker sent as the probe (the oldest held one, CONTRACT §5).
    const lease = (id: string, ttlMs = 60_000, mayProbe = false) => acquireEndpointLease(redis, KEYS, endpoint, { id, ttlMs, limit: 2, mayProbe });
    const probe = (id: string) => lease(id, 60_000, true);
    const release = (leaseId: string, signal: 'success' | 'failure' | 'neutral') =>
      releaseEndpointLease(redis, KEYS, endpoint, { leaseId, signal, failureThreshold: 2, cooldownMs: SHORT_MS, error: `${signal} of ${leaseId}` });

    // Two slots: the third caller is busy until a lease is released or expires.
    const short = await lease('a', SHORT_MS);
    expect(short.verdict).toBe('acquired');
    expect((await lease('b')).verdict).toBe('acquired');
    expect((await lease('c')).verdict).toBe('busy');
    await untilRedisPasses(redis, short.until, 'the short lease’s expiry');
    expect((await lease('c')).verdict).toBe('acquired');

    // Failures below the threshold only count; a success resets the count.
    expect(await release('b', 'failure')).toMatchObject({ change: 'counted', consecutiveFailures: 1 });
    expect(await release('c', 'success')).toMatchObject({ change: 'unchanged' });
    expect(await readEndpointState(redis, KEYS, accountId, url)).toMatchObject({ state: 'closed', consecutive_failures: 0, last_error: 'failure of b' });
    for (const id of ['d', 'e']) expect((await lease(id)).verdict).toBe('acquired');
    expect(await release('d', 'failure')).toMatchObject({ change: 'counted' });
    const opened = await release('e', 'failure');
    expect(opened).toMatchObject({ change: 'opened', consecutiveFailures: 2 });
    expect(await readEndpointState(redis, KEYS, accountId, url)).toMatchObject({ state: 'open', consecutive_failures: 2, last_error: 'failure of e' });

    // Open: nobody gets through until the cooldown ends, not even the probe; then exactly one probe, and
    // only the delivery sent as the probe: any other one is still held.
    const refused = await lease('f');
    expect(refused.verdict).toBe('open');
    expect(refused.until - refused.serverNow).toBeGreaterThan(0);
    expect(refused.until - refused.serverNow).toBeLessThanOrEqual(SHORT_MS);
    expect((await probe('early-probe')).verdict).toBe('open');
    await untilRedisPasses(redis, refused.until, 'the cooldown');
    expect((await lease('held')).verdict).toBe('open');
    expect((await probe('probe-1')).verdict).toBe('probe');
    expect((await probe('g')).verdict).toBe('probing');
    expect((await lease('g')).verdict).toBe('open');
    expect((await readEndpointState(redis, KEYS, accountId, url)).state).toBe('half_open');

    // A probe that learnt nothing hands over; a failed probe re-opens; a successful one closes.
    expect(await release('probe-1', 'neutral')).toMatchObject({ change: 'unchanged' });
    expect((await probe('probe-2')).verdict).toBe('probe');
    expect(await release('probe-2', 'failure')).toMatchObject({ change: 'opened' });
    const reopened = await lease('h');
    expect(reopened.verdict).toBe('open');
    await untilRedisPasses(redis, reopened.until, 'the second cooldown');
    expect((await probe('probe-3')).verdict).toBe('probe');
    expect(await release('probe-3', 'success')).toMatchObject({ change: 'closed' });
    expect(await readEndpointState(redis, KEYS, accountId, url)).toMatchObject({ state: 'closed', consecutive_failures: 0, opened_at: null, retry_at: null });
    expect((await lease('i')).verdict).toBe('acquired');
  });
});
