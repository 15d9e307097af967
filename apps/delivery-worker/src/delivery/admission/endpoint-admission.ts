import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { ENVIRONMENT, type Environment, REDIS } from '@app/runtime';
import { type BreakerSignal, indexBreakerChange, type ReleaseAnswer } from './lease-scripts';
import { WorkerStoppingError } from '../worker-stopping-error';
import { type Admission, admitted, type EndpointCall, type EndpointLease } from './admission-answers';
import type { PacedAnswer } from './busy-delay';
import { CallTurns } from './call-turns';
import { EndpointTiming, NEAR_PLACE_MS } from './endpoint-timing';
import { LeasePools } from './lease-pools';
import type { LocalLeases } from './local-leases';
import { RedisSlots, REUSE_WINDOW_MS } from './redis-slots';

export type { Admission, EndpointCall, EndpointLease } from './admission-answers';
export type { PacedAnswer } from './busy-delay';
export { STUCK_CALL_MS } from './endpoint-timing';
export { REUSE_WINDOW_MS } from './redis-slots';

/**
 * A job waits here for one of this process's leases only when one is expected within this long... With
 * 500 ms, a burst to one fast endpoint on a loaded machine (calls of 25 ms: 190 waiters × 25 ms / 10
 * slots) sent a tenth of its jobs back through Redis's delayed set, and they came back ≥ 50 ms later, at
 * the end of the line: a quick one-endpoint bench ran at 0.22–0.61× its baseline. 2 s was first tried
 * before workers shared an endpoint's slots: one worker kept the leases to itself while another's jobs
 * bounced (two workers 0.24–0.29× their baseline), so 1 s was kept. Since the share (endpoint-slot.ts),
 * 2 s: two workers, 20,000 events, put back 239–533 jobs instead of 1,588–2,045 (0.53–0.55× the
 * baseline against 0.51–0.54×), quick one endpoint 0.58–0.59× against 0.52–0.54× (2026-11-25, pairs).
 */
export const MAX_EXPECTED_WAIT_MS = 2_000;
/** ...and gives up (sent back through Redis) after this long. */
export const MAX_WAIT_MS = 2_500;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

const UNCHANGED: ReleaseAnswer = { change: 'unchanged', consecutiveFailures: 0, retryAt: null };

/**
 * Isolation between endpoints: a bounded share of concurrency per endpoint across every worker (Redis
 * leases) and a shared circuit breaker (libs/runtime endpoint-state). A lease taken while the breaker
 * is closed with no failure counted serves further calls of this process for up to REUSE_WINDOW_MS
 * after its acquire without a Redis script (handed straight to a job waiting here, or kept idle for
 * IDLE_KEEP_MS): a busy endpoint costs a couple of scripts per lease and second instead of two per
 * call. Every failure still goes to Redis at once, and after one no lease of that endpoint is reused
 * until Redis says the count is back to zero, so the breaker counts exactly what this process sees;
 * another worker's news (the breaker opened elsewhere) reaches a reused lease within REUSE_WINDOW_MS.
 * A job finding the endpoint full with this process's own calls waits here for one of them when that
 * is expected soon (MAX_EXPECTED_WAIT_MS), instead of a round trip through Redis's delayed set. While
 * another worker wants the endpoint too, Redis tells this process its share of the slots: it asks for
 * no more, a lease ending a call beyond the share goes back to Redis rather than to a job here, and
 * while it holds fewer, one of its jobs polls Redis for the slots the others give back.
 *
 * Every admitted lease comes with one of the process's call turns (WORKER_CONCURRENCY), and `release`
 * gives both back. A job waiting here for a lease holds no turn: a lease handed over from an ending call
 * brings that call's turn with it, and a job that may ask Redis again first queues for a turn. So one
 * endpoint's waiters never keep other endpoints' jobs from calling (a hanging endpoint holds at most its
 * ENDPOINT_CONCURRENCY turns, those of its calls), and no lease is ever held by a job still waiting for
 * a turn (its TTL covers one call, and other workers would wait on it).
 */
@Injectable()
export class EndpointAdmission {
  private readonly pools: LeasePools;
  private readonly slots: RedisSlots;
  private readonly timing: EndpointTiming;
  private stopped = false;
  /** The process's call turns: one per call in flight, plus one per job asking Redis for a lease. */
  readonly calls: CallTurns;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {
    this.calls = new CallTurns(environment.delivery.workerConcurrency);
    this.pools = new LeasePools(redis, environment);
    this.slots = new RedisSlots(redis, environment, this.pools);
    this.timing = new EndpointTiming(environment.delivery.endpointConcurrency);
  }

  /** True when a job for this endpoint would be sent back at once: every slot is this process's, none idle, no room to wait. */
  isLocallyFull(endpointKey: string): boolean {
    const pool = this.pools.get(endpointKey);
    return pool !== undefined && pool.inUse >= this.slotsOf(pool) && pool.idleCount === 0 && !this.mayWait(endpointKey, pool);
  }

  /**
   * The one admission call: admitted (with a lease and a call turn, both given back by `release`), busy
   * (come back later, no attempt spent) or open (the breaker). Throws WorkerStoppingError at shutdown.
   */
  async acquire(call: EndpointCall): Promise<Admission> {
    const deadline = Date.now() + MAX_WAIT_MS;
    let pacedBusySince: number | undefined;
    for (;;) {
      if (this.stopped) throw new WorkerStoppingError();
      const knownOpen = this.slots.knownOpen(call);
      if (knownOpen) return knownOpen;
      await this.calls.take();
      let admission: Admission | 'wait' | 'poll';
      try {
        admission = await this.admitWithTurn(call, deadline);
      } catch (error) {
        this.calls.give();
        throw error;
      }
      if (typeof admission !== 'string' && admission.kind === 'admitted') return admission;
      // Not admitted, or about to wait for a lease: the turn goes back first.
      this.calls.give();
      // The job's place in the pace is near: waiting here for it costs less than a trip through the delayed set.
      const placeAt = typeof admission !== 'string' && admission.kind === 'busy' ? admission.pace?.at : undefined;
      if (placeAt !== undefined && placeAt - Date.now() <= NEAR_PLACE_MS) {
        await sleep(placeAt - Date.now());
        continue;
      }
      // A paced call found the endpoint full: it may own a place in the pace, which keeps for
      // PLACE_GRACE_MS only, so it asks again after about one call rather than after a trip through the
      // delayed set, for as long as a near place would be waited for.
      if (call.maxPerSecond !== null && typeof admission !== 'string' && admission.kind === 'busy' && admission.pace === null) {
        pacedBusySince ??= Date.now();
        if (Date.now() - pacedBusySince < NEAR_PLACE_MS) {
          await sleep(this.timing.pollMs(call.endpointKey));
          continue;
        }
      }
      if (admission === 'poll') {
        await this.poll(call.endpointKey);
        continue;
      }
      if (admission !== 'wait') return admission;
      const outcome = await this.pools.of(call.endpointKey).wait(deadline - Date.now());
      // Handed over by an ending call, with that call's turn.
      if (outcome.kind === 'lease') return admitted(call.endpointKey, outcome.lease, call.maxPerSecond);
      if (outcome.kind === 'stopping') throw new WorkerStoppingError();
      if (outcome.kind === 'timeout') return { kind: 'busy', pace: null };
      // 'ask': one of this process's leases went back to Redis; try for it.
    }
  }

  /**
   * One look while holding a turn: an idle lease of this process, a lease from Redis, 'wait' for one of
   * this process's, or 'poll' Redis again shortly (the slots are all other workers').
   */
  private async admitWithTurn(call: EndpointCall, deadline: number): Promise<Admission | 'wait' | 'poll'> {
    const { endpointKey, maxPerSecond } = call;
    const pool = this.pools.of(endpointKey);
    // A paced endpoint's every call asks Redis for its place in the pace (no lease is reused for it), and
    // a job that owns a place must reach Redis by the place's time: it neither queues behind this
    // process's other asks nor waits here for a lease. Redis's concurrency check still applies.
    if (maxPerSecond !== null) return this.askRedis(call, pool);
    const now = Date.now();
    const { lease, retired } = pool.takeIdle(now, this.pools.mustOutlive(now));
    void this.pools.retire(endpointKey, retired);
    if (lease) return admitted(endpointKey, lease, maxPerSecond);
    let oldestCallMs: number | undefined;
    if (!pool.polling && pool.inUse + pool.asking < this.slotsOf(pool)) {
      const admission = await this.askRedis(call, pool);
      // Holding less than its share, and nobody here asking: a job waiting here asks for the next slot,
      // so the process's jobs do not all wait on the few leases it holds (no call ending here brings one).
      const short = !pool.polling && pool.inUse + pool.asking < this.slotsOf(pool);
      if (admission.kind === 'admitted' && short) pool.askNewest();
      // The breaker is open: the jobs waiting here for this ask's lease learn it at once instead of at their deadline.
      if (admission.kind === 'open' && !admission.probing) pool.askAll();
      if (admission.kind !== 'busy' || admission.pace !== null) return admission;
      oldestCallMs = admission.oldestCallMs;
      // Refused: the other slots are other workers' (or the origin's other endpoints'). One job here polls
      // for them, this one, or, when its own wait is nearly over, the waiting job with the most left.
      if (short && admission.oldestCallMs !== undefined && admission.oldestCallMs <= this.timing.stuckAfterMs(endpointKey)) {
        if (this.mayPoll(endpointKey, deadline)) return 'poll';
        // At most once per poll interval: the job woken may be as near its end, and would pass it back.
        if (Date.now() - pool.pollPassedAt >= this.timing.pollMs(endpointKey)) {
          pool.pollPassedAt = Date.now();
          pool.askNewest();
        }
      }
    }
    if (pool.inUse + pool.asking === 0 || !this.mayWait(endpointKey, pool) || Date.now() >= deadline) {
      this.pools.dropIfEmpty(endpointKey, pool);
      return { kind: 'busy', pace: null, oldestCallMs };
    }
    return 'wait';
  }

  private async askRedis(call: EndpointCall, pool: LocalLeases): Promise<Admission> {
    pool.asking += 1;
    try {
      return await this.slots.ask(call, pool);
    } finally {
      pool.asking -= 1;
      if (call.maxPerSecond !== null) this.pools.dropIfEmpty(call.endpointKey, pool);
    }
  }

  /** Keeps the operators' index of open endpoints in step with a change this process caused. */
  async indexChange(endpointKey: string, change: ReleaseAnswer['change']): Promise<void> {
    if (change === 'opened' || change === 'closed') await indexBreakerChange(this.redis, this.environment.redis.prefix, endpointKey, change);
  }

  /**
   * How long a job that found this endpoint full (`pace` null), or held by its pace, should wait before
   * trying again: behind the jobs this process already sent back for the same reason (busy-delay.ts).
   * `oldestLeaseMs`: the age of the endpoint's oldest lease, any worker's, when Redis refused. A lease
   * serves calls for up to REUSE_WINDOW_MS, so only what exceeds that is surely one call's; this
   * process's own calls are timed exactly. A stuck call spaces the line (EndpointTiming.busyDelayMs).
   */
  busyDelayMs(endpointKey: string, pace: PacedAnswer | null = null, oldestLeaseMs = 0): number {
    const pool = this.pools.get(endpointKey);
    const oldestHere = pool ? Date.now() - pool.oldestCallSince() : 0;
    return this.timing.busyDelayMs(endpointKey, pace, Math.max(oldestLeaseMs - REUSE_WINDOW_MS, oldestHere, 0));
  }

  /**
   * Frees the lease (or passes it on, with the call turn, see the class), gives the turn back and feeds
   * the breaker. Always call it once per admitted lease; `durationMs` (the call's duration, when one was
   * made) paces the jobs waiting for this endpoint.
   */
  async release(
    lease: EndpointLease,
    signal: BreakerSignal,
    error: string | null,
    durationMs: number | null = null,
    slowDown: { retryAfterMs: number | null } | null = null,
  ): Promise<ReleaseAnswer> {
    if (durationMs !== null) this.timing.noteCall(lease.endpointKey, durationMs);
    const pool = this.pools.get(lease.endpointKey);
    const held = this.pools.heldLease(lease.id);
    if (pool && held) {
      if (signal === 'failure') void this.pools.retire(lease.endpointKey, pool.stopReuse());
      const now = Date.now();
      // Beyond its share (another worker wants the endpoint too), the lease goes back to Redis for it.
      const mayReuse = signal === 'success' && !slowDown && !this.stopped && pool.inUse <= this.slotsOf(pool);
      const reused = mayReuse ? pool.reuse(held, now, this.pools.mustOutlive(now)) : null;
      // Handed over: the waiting job has the lease and this call's turn.
      if (reused === 'handed') return UNCHANGED;
      if (reused === 'idle') {
        this.calls.give();
        this.pools.scheduleSweep();
        return UNCHANGED;
      }
    }
    this.calls.give();
    this.pools.forget(lease.id);
    try {
      return await this.slots.giveBack(lease, signal, error, slowDown);
    } finally {
      // Only now is the slot free in Redis for a job waiting here.
      if (pool && held) {
        pool.freed(held);
        this.pools.dropIfEmpty(lease.endpointKey, pool);
      }
    }
  }

  /** Shutdown: jobs waiting for a lease start no call, idle leases go back to Redis (resolves once they have). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.pools.stop();
  }

  /**
   * Waiting here pays when a slot is expected soon (MAX_EXPECTED_WAIT_MS) and none of the endpoint's calls
   * here looks stuck (STUCK_CALL_MS): an endpoint that just started to hang gets no new waiters, and the
   * ones it has are sent back at once instead of holding their shard's job slots until their deadline.
   * Waiters hold no turn, so their number is bounded by the expected wait alone (and by the jobs a
   * shard's worker holds): a count cap sent every job past it through Redis's delayed set (0.8
   * put-backs per event). A waiting job holds a job slot of its shard's worker only: the next job that
   * worker takes is still chosen by rank, so another account's event goes first.
   */
  private mayWait(endpointKey: string, pool: LocalLeases): boolean {
    if (Date.now() - pool.oldestCallSince() > this.timing.stuckAfterMs(endpointKey)) {
      // The jobs already waiting would hold their shard's job slots until their deadline: back they go too.
      pool.sendBackWaiters();
      return false;
    }
    return ((pool.waiting + 1) * this.timing.expectedCallMs(endpointKey)) / this.slotsOf(pool) <= MAX_EXPECTED_WAIT_MS;
  }

  /**
   * The slots this process lacks of its share are other workers' (Redis refused it while it held fewer,
   * and the endpoint's oldest call, any worker's, does not look stuck): asking again after about one call
   * is cheaper than a trip through the delayed set (≥ 50 ms, at the end of the line), unless the job's
   * wait is over. Being refused marked this worker as wanting the endpoint, so the others give back what
   * exceeds their share as their calls end.
   */
  private mayPoll(endpointKey: string, deadline: number): boolean {
    return !this.stopped && Date.now() + this.timing.pollMs(endpointKey) < deadline;
  }

  /** Waits before polling again, as the endpoint's poller: its other jobs here wait for what it gets instead of asking too. */
  private async poll(endpointKey: string): Promise<void> {
    const pool = this.pools.of(endpointKey);
    pool.polling = true;
    pool.asking += 1;
    try {
      await sleep(this.timing.pollMs(endpointKey));
    } finally {
      pool.polling = false;
      pool.asking -= 1;
    }
  }

  /** The endpoint's slots this process may hold now (its share while other workers want the endpoint too). */
  private slotsOf(pool: LocalLeases): number {
    return pool.slots(this.environment.delivery.endpointConcurrency, Date.now());
  }
}

