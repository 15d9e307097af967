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

export interface EndpointLease {
  endpointKey: string;
  id: string;
  probe: boolean;
}

export type Admission =
  | { kind: 'admitted'; lease: EndpointLease }
  /** Every slot of this endpoint is in use: come back shortly. */
  | { kind: 'busy' }
  /** The breaker is open (the attempt fails without a call), or a half-open probe is in flight (`probing`: wait up to `waitMs`). */
  | { kind: 'open'; waitMs: number; retryAt: Date; consecutiveFailures: number; lastError: string | null; probing: boolean };

/** Extra lifetime of a lease beyond the HTTP deadline, so a lease never expires under a call still running. */
const LEASE_MARGIN_MS = 5_000;

/** How this process paces jobs that found an endpoint full. */
export interface Pace {
  /** Moving average of this endpoint's call durations here. */
  averageMs: number;
  /** When the last job sent back is due to return. */
  nextAt: number;
}

export const MIN_BUSY_DELAY_MS = 50;
export const MAX_BUSY_DELAY_MS = 30_000;
const DEFAULT_CALL_MS = 100;
const MAX_PACED_ENDPOINTS = 10_000;

/**
 * When a job that found its endpoint full should come back. Jobs sent back are lined up behind each
 * other, spaced by the time the endpoint takes to free a slot (average call time / concurrency share),
 * so a burst of N jobs to one endpoint returns about when each can be served instead of bouncing
 * through Redis over and over. ±10 % spread keeps workers from returning in lockstep.
 */
export function pacedDelay(pace: Pace, now: number, endpointConcurrency: number, random: () => number = Math.random): number {
  const spacing = pace.averageMs / Math.max(1, endpointConcurrency);
  const due = Math.min(Math.max(now + MIN_BUSY_DELAY_MS, pace.nextAt + spacing), now + MAX_BUSY_DELAY_MS);
  pace.nextAt = due;
  return Math.round((due - now) * (0.9 + random() * 0.2));
}

/**
 * Isolation between endpoints: a bounded share of concurrency per endpoint across every worker (Redis
 * leases) and a shared circuit breaker (libs/runtime endpoint-state). One Redis script before the call,
 * one after it.
 */
@Injectable()
export class EndpointGuard {
  private readonly workerId = randomUUID();
  private sequence = 0;
  /** Leases this process holds per endpoint: when they alone fill the share, no need to ask Redis. */
  private readonly local = new Map<string, number>();
  private readonly pacing = new Map<string, Pace>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** True when this process alone holds every slot of the endpoint: no need to ask Redis to know it is busy. */
  isLocallyFull(endpointKey: string): boolean {
    return (this.local.get(endpointKey) ?? 0) >= this.environment.delivery.endpointConcurrency;
  }

  /** `force` (a manual redelivery's first call) passes an open breaker, never a full endpoint. */
  async acquire(endpointKey: string, force = false): Promise<Admission> {
    const { delivery, redis } = this.environment;
    if (this.isLocallyFull(endpointKey)) return { kind: 'busy' };
    this.sequence += 1;
    const id = `${this.workerId}:${this.sequence}`;
    const answer = await acquireEndpointSlot(this.redis, redis.prefix, endpointKey, {
      id,
      ttlMs: delivery.timeoutMs + LEASE_MARGIN_MS,
      limit: delivery.endpointConcurrency,
      force,
    });
    switch (answer.verdict) {
      case 'acquired':
      case 'probe':
        this.local.set(endpointKey, (this.local.get(endpointKey) ?? 0) + 1);
        return { kind: 'admitted', lease: { endpointKey, id, probe: answer.verdict === 'probe' } };
      case 'busy':
        return { kind: 'busy' };
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
    let pace = this.pacing.get(endpointKey);
    if (!pace) {
      if (this.pacing.size >= MAX_PACED_ENDPOINTS) this.pacing.delete(this.pacing.keys().next().value as string);
      pace = { averageMs: DEFAULT_CALL_MS, nextAt: 0 };
      this.pacing.set(endpointKey, pace);
    }
    return pacedDelay(pace, Date.now(), this.environment.delivery.endpointConcurrency);
  }

  /**
   * Frees the lease and feeds the breaker. Always call it once per admitted lease; `durationMs` (the
   * call's duration, when one was made) paces the jobs waiting for this endpoint.
   */
  async release(lease: EndpointLease, signal: BreakerSignal, error: string | null, durationMs: number | null = null): Promise<ReleaseAnswer> {
    const pace = this.pacing.get(lease.endpointKey);
    if (pace && durationMs !== null) pace.averageMs = pace.averageMs * 0.8 + durationMs * 0.2;
    const held = (this.local.get(lease.endpointKey) ?? 1) - 1;
    if (held > 0) this.local.set(lease.endpointKey, held);
    else this.local.delete(lease.endpointKey);
    const { delivery, redis } = this.environment;
    return releaseEndpointSlot(this.redis, redis.prefix, lease.endpointKey, {
      leaseId: lease.id,
      signal,
      failureThreshold: delivery.breakerFailureThreshold,
      cooldownMs: delivery.breakerCooldownMs,
      error,
    });
  }
}
