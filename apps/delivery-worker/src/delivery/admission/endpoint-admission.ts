import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { ENVIRONMENT, type Environment, REDIS, RedisKeys } from '@app/runtime';
import { type BreakerSignal, indexBreakerChange, type ReleaseAnswer } from './lease-scripts';
import { WorkerStoppingError } from '../worker-stopping-error';
import { type Admission, admitted, type EndpointCall, type EndpointLease } from './admission-answers';
import type { PacedAnswer } from './busy-delay';
import { CallLimit } from './call-limit';
import { EndpointTiming, MAX_EXPECTED_WAIT_MS, MAX_WAIT_MS, NEAR_PLACE_MS } from './endpoint-timing';
import { ProcessLeases } from './process-leases';
import type { LocalLeases } from './local-leases';
import { RedisLeases } from './redis-leases';
import { REUSE_WINDOW_MS } from './reuse-window';

export type { Admission, EndpointCall, EndpointLease } from './admission-answers';
export type { PacedAnswer } from './busy-delay';
export { MAX_EXPECTED_WAIT_MS, MAX_WAIT_MS, STUCK_CALL_MS } from './endpoint-timing';
export { REUSE_WINDOW_MS } from './reuse-window';


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
 * another worker wants the endpoint too, Redis tells this process its share of the leases: it asks for
 * no more, a lease ending a call beyond the share goes back to Redis rather than to a job here, and
 * while it holds fewer, one of its jobs polls Redis for the leases the others give back.
 *
 * Every admitted lease comes with one of the process's calls (WORKER_CONCURRENCY), and `release`
 * gives both back. A job waiting here for a lease holds no call: a lease handed over from an ending call
 * brings that call with it, and a job that may ask Redis again first queues for a call. So one
 * endpoint's waiting jobs never keep other endpoints' jobs from calling (a hanging endpoint holds at most its
 * ENDPOINT_CONCURRENCY calls, those of its calls), and no lease is ever held by a job still waiting for
 * a call (its TTL covers one call, and other workers would wait on it).
 */
@Injectable()
export class EndpointAdmission {
  private readonly leases: ProcessLeases;
  private readonly redisLeases: RedisLeases;
  private readonly timing: EndpointTiming;
  private stopped = false;
  /** The process's calls: one per call in flight, plus one per job asking Redis for a lease. */
  readonly calls: CallLimit;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly keys: RedisKeys,
  ) {
    this.calls = new CallLimit(environment.delivery.workerConcurrency);
    this.leases = new ProcessLeases(redis, keys, environment);
    this.redisLeases = new RedisLeases(redis, keys, environment, this.leases);
    this.timing = new EndpointTiming(environment.delivery.endpointConcurrency);
  }

  /** True when a job for this endpoint would be sent back at once: every lease is this process's, none idle, no room to wait. */
  isLocallyFull(endpointKey: string): boolean {
    const local = this.leases.get(endpointKey);
    return local !== undefined && local.inUse >= this.leasesAllowed(local) && local.idleCount === 0 && !this.mayWait(endpointKey, local);
  }

  /**
   * The one admission call: admitted (with a lease and a call, both given back by `release`), busy
   * (come back later, no attempt spent) or open (the breaker). Throws WorkerStoppingError at shutdown.
   */
  async acquire(call: EndpointCall): Promise<Admission> {
    const deadline = Date.now() + MAX_WAIT_MS;
    let pacedBusySince: number | undefined;
    for (;;) {
      if (this.stopped) throw new WorkerStoppingError();
      const knownOpen = this.redisLeases.knownOpen(call);
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
      // Not admitted, or about to wait for a lease: the call goes back first.
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
      const outcome = await this.leases.of(call.endpointKey).wait(deadline - Date.now());
      // Handed over by an ending call, with that call.
      if (outcome.kind === 'lease') return admitted(call.endpointKey, outcome.lease, call.maxPerSecond);
      if (outcome.kind === 'stopping') throw new WorkerStoppingError();
      if (outcome.kind === 'timeout') return { kind: 'busy', pace: null };
      // 'ask': one of this process's leases went back to Redis; try for it.
    }
  }

  /**
   * One look while holding a call: an idle lease of this process, a lease from Redis, 'wait' for one of
   * this process's, or 'poll' Redis again shortly (the leases are all other workers').
   */
  private async admitWithTurn(call: EndpointCall, deadline: number): Promise<Admission | 'wait' | 'poll'> {
    const { endpointKey, maxPerSecond } = call;
    const local = this.leases.of(endpointKey);
    // A paced endpoint's every call asks Redis for its place in the pace (no lease is reused for it), and
    // a job that owns a place must reach Redis by the place's time: it neither queues behind this
    // process's other asks nor waits here for a lease. Redis's concurrency check still applies.
    if (maxPerSecond !== null) return this.askRedis(call, local);
    const now = Date.now();
    const { lease, retired } = local.takeIdle(now, this.leases.mustOutlive(now));
    void this.leases.retire(endpointKey, retired);
    if (lease) return admitted(endpointKey, lease, maxPerSecond);
    let oldestCallMs: number | undefined;
    if (!local.polling && local.inUse + local.asking < this.leasesAllowed(local)) {
      const admission = await this.askRedis(call, local);
      // Holding less than its share, and nobody here asking: a job waiting here asks for the next lease,
      // so the process's jobs do not all wait on the few leases it holds (no call ending here brings one).
      const short = !local.polling && local.inUse + local.asking < this.leasesAllowed(local);
      if (admission.kind === 'admitted' && short) local.askNewest();
      // The breaker is open: the jobs waiting here for this ask's lease learn it at once instead of at their deadline.
      if (admission.kind === 'open' && !admission.probing) local.askAll();
      if (admission.kind !== 'busy' || admission.pace !== null) return admission;
      oldestCallMs = admission.oldestCallMs;
      // Refused: the other leases are other workers' (or the origin's other endpoints'). One job here polls
      // for them, this one, or, when its own wait is nearly over, the waiting job with the most left.
      if (short && admission.oldestCallMs !== undefined && admission.oldestCallMs <= this.timing.stuckAfterMs(endpointKey)) {
        if (this.mayPoll(endpointKey, deadline)) return 'poll';
        // At most once per poll interval: the job woken may be as near its end, and would pass it back.
        if (Date.now() - local.pollPassedAt >= this.timing.pollMs(endpointKey)) {
          local.pollPassedAt = Date.now();
          local.askNewest();
        }
      }
    }
    if (local.inUse + local.asking === 0 || !this.mayWait(endpointKey, local) || Date.now() >= deadline) {
      this.leases.dropIfEmpty(endpointKey, local);
      return { kind: 'busy', pace: null, oldestCallMs };
    }
    return 'wait';
  }

  private async askRedis(call: EndpointCall, local: LocalLeases): Promise<Admission> {
    local.asking += 1;
    try {
      return await this.redisLeases.ask(call, local);
    } finally {
      local.asking -= 1;
      if (call.maxPerSecond !== null) this.leases.dropIfEmpty(call.endpointKey, local);
    }
  }

  /** Keeps the operators' index of open endpoints in step with a change this process caused. */
  async indexChange(endpointKey: string, change: ReleaseAnswer['change']): Promise<void> {
    if (change === 'opened' || change === 'closed') await indexBreakerChange(this.redis, this.keys, endpointKey, change);
  }

  /**
   * How long a job that found this endpoint full (`pace` null), or held by its pace, should wait before
   * trying again: behind the jobs this process already sent back for the same reason (busy-delay.ts).
   * `oldestLeaseMs`: the age of the endpoint's oldest lease, any worker's, when Redis refused. A lease
   * serves calls for up to REUSE_WINDOW_MS, so only what exceeds that is surely one call's; this
   * process's own calls are timed exactly. A stuck call spaces the line (EndpointTiming.busyDelayMs).
   */
  busyDelayMs(endpointKey: string, pace: PacedAnswer | null = null, oldestLeaseMs = 0): number {
    const local = this.leases.get(endpointKey);
    const oldestHere = local ? Date.now() - local.oldestCallSince() : 0;
    return this.timing.busyDelayMs(endpointKey, pace, Math.max(oldestLeaseMs - REUSE_WINDOW_MS, oldestHere, 0));
  }

  /**
   * Frees the lease (or passes it on, with the call, see the class), gives the call back and feeds
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
    const local = this.leases.get(lease.endpointKey);
    const held = this.leases.heldLease(lease.id);
    if (local && held) {
      if (signal === 'failure') void this.leases.retire(lease.endpointKey, local.stopReuse());
      const now = Date.now();
      // Beyond its share (another worker wants the endpoint too), the lease goes back to Redis for it.
      const mayReuse = signal === 'success' && !slowDown && !this.stopped && local.inUse <= this.leasesAllowed(local);
      const reused = mayReuse ? local.reuse(held, now, this.leases.mustOutlive(now)) : null;
      // Handed over: the waiting job has the lease and this call.
      if (reused === 'handed') return UNCHANGED;
      if (reused === 'idle') {
        this.calls.give();
        this.leases.scheduleSweep();
        return UNCHANGED;
      }
    }
    this.calls.give();
    this.leases.forget(lease.id);
    try {
      return await this.redisLeases.giveBack(lease, signal, error, slowDown);
    } finally {
      // Only now is the lease free in Redis for a job waiting here.
      if (local && held) {
        local.freed(held);
        this.leases.dropIfEmpty(lease.endpointKey, local);
      }
    }
  }

  /** Shutdown: jobs waiting for a lease start no call, idle leases go back to Redis (resolves once they have). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.leases.stop();
  }

  /**
   * Waiting here pays when a lease is expected soon (MAX_EXPECTED_WAIT_MS) and none of the endpoint's calls
   * here looks stuck (STUCK_CALL_MS): an endpoint that just started to hang gets no new waiting jobs, and the
   * ones it has are sent back at once instead of holding their shard's jobs in hand until their deadline.
   * Waiting jobs hold no call, so their number is bounded by the expected wait alone (and by the jobs a
   * shard's worker holds): a count cap sent every job past it through Redis's delayed set. A waiting job holds a job in hand of its shard's worker only: the next job that
   * worker takes is still chosen by rank, so another account's event goes first.
   */
  private mayWait(endpointKey: string, local: LocalLeases): boolean {
    if (Date.now() - local.oldestCallSince() > this.timing.stuckAfterMs(endpointKey)) {
      // The jobs already waiting would hold their shard's jobs in hand until their deadline: back they go too.
      local.sendBackWaitingJobs();
      return false;
    }
    return ((local.waiting + 1) * this.timing.expectedCallMs(endpointKey)) / this.leasesAllowed(local) <= MAX_EXPECTED_WAIT_MS;
  }

  /**
   * The leases this process lacks of its share are other workers' (Redis refused it while it held fewer,
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
    const local = this.leases.of(endpointKey);
    local.polling = true;
    local.asking += 1;
    try {
      await sleep(this.timing.pollMs(endpointKey));
    } finally {
      local.polling = false;
      local.asking -= 1;
    }
  }

  /** The endpoint's leases this process may hold now (its share while other workers want the endpoint too). */
  private leasesAllowed(local: LocalLeases): number {
    return local.allowed(this.environment.delivery.endpointConcurrency, Date.now());
  }
}

