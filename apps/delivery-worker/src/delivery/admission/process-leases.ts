import type Redis from 'ioredis';
import type { Environment, RedisKeys } from '@app/runtime';
import { releaseEndpointLease } from './lease-scripts';
import { REUSE_WINDOW_MS } from './reuse-window';
import { type HeldLease, LocalLeases } from './local-leases';

/**
 * An idle lease goes back to Redis after this long unused, so other workers get it: a quarter of its
 * reuse window, so an endpoint this process calls four or more times a second runs no acquire or
 * release script per call. An idle lease keeps another worker out only when the endpoint is otherwise
 * full, for at most this long, and never beyond its reuse window (measurements: docs/lanes.md).
 */
export const IDLE_KEEP_MS = REUSE_WINDOW_MS / 4;

/**
 * Every endpoint's LocalLeases in this process and every lease it holds in Redis (in use or idle), by
 * id; idle leases go back to Redis once unused for IDLE_KEEP_MS, or at shutdown. EndpointAdmission
 * decides who gets a lease; this keeps the books and returns the idle ones.
 */
export class ProcessLeases {
  private readonly endpoints = new Map<string, LocalLeases>();
  private readonly held = new Map<string, HeldLease>();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly environment: Environment,
  ) {}

  get(endpointKey: string): LocalLeases | undefined {
    return this.endpoints.get(endpointKey);
  }

  of(endpointKey: string): LocalLeases {
    let local = this.endpoints.get(endpointKey);
    if (!local) {
      local = new LocalLeases();
      this.endpoints.set(endpointKey, local);
    }
    return local;
  }

  /** A lease just taken in Redis. */
  track(lease: HeldLease): void {
    this.held.set(lease.id, lease);
  }

  heldLease(id: string): HeldLease | undefined {
    return this.held.get(id);
  }

  /** The lease is going back to Redis. */
  forget(id: string): void {
    this.held.delete(id);
  }

  dropIfEmpty(endpointKey: string, local: LocalLeases): void {
    if (local.empty && this.endpoints.get(endpointKey) === local) this.endpoints.delete(endpointKey);
  }

  /** A reused lease must outlive the longest call it may serve. */
  mustOutlive(now: number): number {
    return now + this.environment.delivery.timeoutMs + 1_000;
  }

  /**
   * Idle leases back to Redis, as plain returns ('neutral'): their successes are old news, and reporting
   * them now could reset a count of failures other workers saw since. Never throws: a lease that could
   * not be returned expires by itself.
   */
  async retire(endpointKey: string, leases: HeldLease[]): Promise<void> {
    const { delivery } = this.environment;
    await Promise.all(
      leases.map(async (lease) => {
        this.held.delete(lease.id);
        try {
          await releaseEndpointLease(this.redis, this.keys, endpointKey, {
            leaseId: lease.id,
            signal: 'neutral',
            failureThreshold: delivery.breakerFailureThreshold,
            cooldownMs: delivery.breakerCooldownMs,
            error: null,
          });
        } catch {
          // expires by itself
        } finally {
          const local = this.endpoints.get(endpointKey);
          if (local) this.dropIfEmpty(endpointKey, local);
        }
      }),
    );
  }

  /** A lease just went idle: it goes back to Redis unless reused within IDLE_KEEP_MS. */
  scheduleSweep(): void {
    if (this.sweeper || this.stopped) return;
    this.sweeper = setTimeout(() => {
      this.sweeper = null;
      const now = Date.now();
      let idleLeft = false;
      for (const [endpointKey, local] of this.endpoints) {
        void this.retire(endpointKey, local.sweep(now, now - IDLE_KEEP_MS, this.mustOutlive(now)));
        if (local.idleCount > 0) idleLeft = true;
      }
      if (idleLeft) this.scheduleSweep();
    }, IDLE_KEEP_MS);
    this.sweeper.unref();
  }

  /** Shutdown: jobs waiting for a lease start no call, idle leases go back to Redis (resolves once they have). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    this.sweeper = null;
    await Promise.all([...this.endpoints].map(([endpointKey, local]) => this.retire(endpointKey, local.stop())));
  }
}
