import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import {
  acquireEndpointSlot,
  type BreakerSignal,
  ENVIRONMENT,
  type Environment,
  indexBreakerChange,
  REDIS,
  releaseEndpointSlot,
  type ReleaseAnswer,
} from '@app/runtime';
import { WorkerStoppingError } from '../request/callback-exchange';
import { DEFAULT_CALL_MS, MAX_PACED_ENDPOINTS, type Pace, pacedDelay } from './busy-delay';
import { type HeldLease, LocalLeases } from './local-leases';

export interface EndpointLease {
  endpointKey: string;
  id: string;
  probe: boolean;
  /** The endpoint's max_per_second when the lease was taken (its release adjusts the pace against it). */
  maxPerSecond: number | null;
}

/** What a call needs to know of its endpoint to be admitted. */
export interface EndpointCall {
  endpointKey: string;
  /** A manual redelivery's first call: passes an open breaker, never a full endpoint or its pace. */
  force: boolean;
  maxPerSecond: number | null;
}

export type Admission =
  | { kind: 'admitted'; lease: EndpointLease }
  /** Every slot of this endpoint is in use, or its pace lets the next call start only in `waitMs` (null: shortly). */
  | { kind: 'busy'; waitMs: number | null }
  /** The breaker is open (the attempt fails without a call), or a half-open probe is in flight (`probing`: wait up to `waitMs`). */
  | { kind: 'open'; waitMs: number; retryAt: Date; consecutiveFailures: number; lastError: string | null; probing: boolean };

/** Extra lifetime of a lease beyond the HTTP deadline, so a lease never expires under a call still running. */
const LEASE_MARGIN_MS = 5_000;

export { MAX_BUSY_DELAY_MS, MIN_BUSY_DELAY_MS, type Pace, pacedDelay } from './busy-delay';

/** How long a lease may serve further calls of this process without asking Redis (the breaker's news reaches it at least this often). */
export const REUSE_WINDOW_MS = 1_000;
/** An idle lease goes back to Redis after this long unused, so other workers get the slot. */
export const IDLE_KEEP_MS = 50;
/** A job waits here for one of this process's leases only when one is expected within this long... */
export const MAX_EXPECTED_WAIT_MS = 500;
/** ...and gives up (sent back through Redis) after this long. */
export const MAX_WAIT_MS = 1_000;

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
 * is expected soon (MAX_EXPECTED_WAIT_MS), instead of a round trip through Redis's delayed set.
 */
@Injectable()
export class EndpointAdmission {
  private readonly workerId = randomUUID();
  private sequence = 0;
  private readonly pools = new Map<string, LocalLeases>();
  /** Every lease this process holds in Redis (in use or idle), by id. */
  private readonly held = new Map<string, HeldLease>();
  private readonly pacing = new Map<string, Pace>();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** True when a job for this endpoint would be sent back at once: every slot is this process's, none idle, no room to wait. */
  isLocallyFull(endpointKey: string): boolean {
    const pool = this.pools.get(endpointKey);
    return pool !== undefined && pool.inUse >= this.environment.delivery.endpointConcurrency && pool.idleCount === 0 && !this.mayWait(endpointKey, pool);
  }

  /** The one admission call: admitted (with a lease), busy (come back later, no attempt spent) or open (the breaker). */
  async acquire({ endpointKey, force, maxPerSecond }: EndpointCall): Promise<Admission> {
    const deadline = Date.now() + MAX_WAIT_MS;
    for (;;) {
      if (this.stopped) throw new WorkerStoppingError();
      const pool = this.poolOf(endpointKey);
      const now = Date.now();
      const { lease, retired } = pool.takeIdle(now, this.mustOutlive(now));
      void this.retire(endpointKey, retired);
      if (lease) return admitted(endpointKey, lease, maxPerSecond);
      if (pool.inUse < this.environment.delivery.endpointConcurrency) {
        const admission = await this.acquireInRedis(endpointKey, pool, force, maxPerSecond);
        if (admission.kind !== 'busy' || admission.waitMs !== null) return admission;
      }
      if (pool.inUse === 0 || !this.mayWait(endpointKey, pool) || Date.now() >= deadline) {
        this.dropIfEmpty(endpointKey, pool);
        return { kind: 'busy', waitMs: null };
      }
      const outcome = await pool.wait(deadline - Date.now());
      if (outcome.kind === 'lease') return admitted(endpointKey, outcome.lease, maxPerSecond);
      if (outcome.kind === 'stopping') throw new WorkerStoppingError();
      if (outcome.kind === 'timeout') return { kind: 'busy', waitMs: null };
      // 'ask': one of this process's leases went back to Redis; try for it.
    }
  }

  private async acquireInRedis(endpointKey: string, pool: LocalLeases, force: boolean, maxPerSecond: number | null): Promise<Admission> {
    const { delivery, redis } = this.environment;
    this.sequence += 1;
    const id = `${this.workerId}:${this.sequence}`;
    const sentAt = Date.now();
    const answer = await acquireEndpointSlot(this.redis, redis.prefix, endpointKey, {
      id,
      ttlMs: delivery.timeoutMs + LEASE_MARGIN_MS,
      limit: delivery.endpointConcurrency,
      originLimit: delivery.originConcurrency,
      maxPerSecond,
      force,
    });
    switch (answer.verdict) {
      case 'acquired':
      case 'probe': {
        // A paced endpoint's every call takes its place in the pace in Redis: no lease is reused for it.
        const reusable = answer.verdict === 'acquired' && !force && answer.consecutiveFailures === 0 && !answer.paced;
        const lease: HeldLease = {
          id,
          expiresAt: sentAt + (answer.until - answer.serverNow),
          reusableUntil: reusable ? sentAt + REUSE_WINDOW_MS : 0,
          busySince: sentAt,
        };
        this.held.set(id, lease);
        pool.add(lease, Date.now());
        return { kind: 'admitted', lease: { endpointKey, id, probe: answer.verdict === 'probe', maxPerSecond } };
      }
      case 'busy':
        return { kind: 'busy', waitMs: null };
      case 'paced':
        return { kind: 'busy', waitMs: Math.max(1, answer.until - answer.serverNow) };
      case 'open':
      case 'probing':
        return {
          kind: 'open',
          waitMs: Math.max(0, answer.until - answer.serverNow),
          retryAt: new Date(Date.now() + Math.max(0, answer.until - answer.serverNow)),
          consecutiveFailures: answer.consecutiveFailures,
          lastError: answer.lastError,
          probing: answer.verdict === 'probing',
        };
    }
  }

  /** Keeps the operators' index of open endpoints in step with a change this process caused. */
  async indexChange(endpointKey: string, change: ReleaseAnswer['change']): Promise<void> {
    if (change === 'opened' || change === 'closed') await indexBreakerChange(this.redis, this.environment.redis.prefix, endpointKey, change);
  }

  /** How long a job that found this endpoint full should wait before trying again. */
  busyDelayMs(endpointKey: string): number {
    return pacedDelay(this.paceOf(endpointKey), Date.now(), this.environment.delivery.endpointConcurrency);
  }

  /**
   * Frees the lease (or passes it on, see the class) and feeds the breaker. Always call it once per
   * admitted lease; `durationMs` (the call's duration, when one was made) paces the jobs waiting for
   * this endpoint.
   */
  async release(
    lease: EndpointLease,
    signal: BreakerSignal,
    error: string | null,
    durationMs: number | null = null,
    slowDown: { retryAfterMs: number | null } | null = null,
  ): Promise<ReleaseAnswer> {
    if (durationMs !== null) {
      const pace = this.paceOf(lease.endpointKey);
      pace.averageMs = pace.averageMs * 0.8 + durationMs * 0.2;
    }
    const pool = this.pools.get(lease.endpointKey);
    const held = this.held.get(lease.id);
    if (pool && held) {
      if (signal === 'failure') void this.retire(lease.endpointKey, pool.stopReuse());
      const now = Date.now();
      if (signal === 'success' && !slowDown && !this.stopped && pool.reuse(held, now, this.mustOutlive(now))) {
        this.scheduleSweep();
        return UNCHANGED;
      }
    }
    this.held.delete(lease.id);
    const { delivery, redis } = this.environment;
    try {
      return await releaseEndpointSlot(this.redis, redis.prefix, lease.endpointKey, {
        leaseId: lease.id,
        signal,
        failureThreshold: delivery.breakerFailureThreshold,
        cooldownMs: delivery.breakerCooldownMs,
        error,
        slowDown,
        maxPerSecond: lease.maxPerSecond,
      });
    } finally {
      // Only now is the slot free in Redis for a job waiting here.
      if (pool && held) {
        pool.freed(held);
        this.dropIfEmpty(lease.endpointKey, pool);
      }
    }
  }

  /** Shutdown: jobs waiting for a lease start no call, idle leases go back to Redis (resolves once they have). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    this.sweeper = null;
    await Promise.all([...this.pools].map(([endpointKey, pool]) => this.retire(endpointKey, pool.stop())));
  }

  /**
   * Waiting here pays when a slot is expected soon: calls to this endpoint are fast on average and none
   * has run for long (an endpoint that just started to hang gets no new waiters, so it cannot hold many
   * of the process's WORKER_CONCURRENCY turns for long).
   */
  private mayWait(endpointKey: string, pool: LocalLeases): boolean {
    const averageMs = this.pacing.get(endpointKey)?.averageMs ?? DEFAULT_CALL_MS;
    const { endpointConcurrency, workerConcurrency } = this.environment.delivery;
    return (
      // One endpoint's waiters hold turns too: no more of them than it has slots, so other endpoints keep turns.
      pool.waiting < Math.min(workerConcurrency, endpointConcurrency) &&
      ((pool.waiting + 1) * averageMs) / endpointConcurrency <= MAX_EXPECTED_WAIT_MS &&
      Date.now() - pool.oldestCallSince() <= MAX_EXPECTED_WAIT_MS
    );
  }

  /** A reused lease must outlive the longest call it may serve. */
  private mustOutlive(now: number): number {
    return now + this.environment.delivery.timeoutMs + 1_000;
  }

  private poolOf(endpointKey: string): LocalLeases {
    let pool = this.pools.get(endpointKey);
    if (!pool) {
      pool = new LocalLeases();
      this.pools.set(endpointKey, pool);
    }
    return pool;
  }

  private dropIfEmpty(endpointKey: string, pool: LocalLeases): void {
    if (pool.empty && this.pools.get(endpointKey) === pool) this.pools.delete(endpointKey);
  }

  private paceOf(endpointKey: string): Pace {
    let pace = this.pacing.get(endpointKey);
    if (!pace) {
      if (this.pacing.size >= MAX_PACED_ENDPOINTS) this.pacing.delete(this.pacing.keys().next().value as string);
      pace = { averageMs: DEFAULT_CALL_MS, nextAt: 0 };
      this.pacing.set(endpointKey, pace);
    }
    return pace;
  }

  /**
   * Idle leases back to Redis, as plain returns ('neutral'): their successes are old news, and reporting
   * them now could reset a count of failures other workers saw since. Never throws: a lease that could
   * not be returned expires by itself.
   */
  private async retire(endpointKey: string, leases: HeldLease[]): Promise<void> {
    const { delivery, redis } = this.environment;
    await Promise.all(
      leases.map(async (lease) => {
        this.held.delete(lease.id);
        try {
          await releaseEndpointSlot(this.redis, redis.prefix, endpointKey, {
            leaseId: lease.id,
            signal: 'neutral',
            failureThreshold: delivery.breakerFailureThreshold,
            cooldownMs: delivery.breakerCooldownMs,
            error: null,
          });
        } catch {
          // expires by itself
        } finally {
          const pool = this.pools.get(endpointKey);
          if (pool) this.dropIfEmpty(endpointKey, pool);
        }
      }),
    );
  }

  private scheduleSweep(): void {
    if (this.sweeper || this.stopped) return;
    this.sweeper = setTimeout(() => {
      this.sweeper = null;
      const now = Date.now();
      let idleLeft = false;
      for (const [endpointKey, pool] of this.pools) {
        void this.retire(endpointKey, pool.sweep(now, now - IDLE_KEEP_MS, this.mustOutlive(now)));
        if (pool.idleCount > 0) idleLeft = true;
      }
      if (idleLeft) this.scheduleSweep();
    }, IDLE_KEEP_MS);
    this.sweeper.unref();
  }
}

function admitted(endpointKey: string, lease: HeldLease, maxPerSecond: number | null): Admission {
  return { kind: 'admitted', lease: { endpointKey, id: lease.id, probe: false, maxPerSecond } };
}
