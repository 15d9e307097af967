import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Environment, RedisKeys } from '@app/runtime';
import { WAIT_MARK_MS } from './endpoint-keys';
import { acquireEndpointLease, type BreakerSignal, type ReleaseAnswer, releaseEndpointLease } from './lease-scripts';
import { type Admission, admitted, type EndpointCall, type EndpointLease, openAdmission } from './admission-answers';
import type { ProcessLeases } from './process-leases';
import type { HeldLease, LocalLeases } from './local-leases';
import { OpenBreakers } from './open-breakers';
import { REUSE_WINDOW_MS } from './reuse-window';

/** Extra lifetime of a lease beyond the HTTP deadline, so a lease never expires under a call still running. */
const LEASE_MARGIN_MS = 5_000;


/**
 * An endpoint's leases in Redis as this worker asks for them and gives them back: the acquire and release
 * scripts (lease-scripts.ts), the lease ids (`<worker id>:<n>`), the acquire's answer as an
 * admission, and the open breakers it answered, remembered for up to REUSE_WINDOW_MS (open-breakers.ts).
 * EndpointAdmission decides when to ask.
 */
export class RedisLeases {
  private readonly workerId = randomUUID();
  private sequence = 0;
  private readonly openBreakers = new OpenBreakers(REUSE_WINDOW_MS);

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly environment: Environment,
    private readonly leases: ProcessLeases,
  ) {}

  /** The breaker as Redis said a moment ago, while still trusted (never for a forced call): no need to ask. */
  knownOpen(call: EndpointCall): Admission | null {
    const breaker = call.force || call.probe ? null : this.openBreakers.lookup(call.endpointKey, Date.now());
    return breaker ? openAdmission(breaker, false) : null;
  }

  /** Asks Redis for one of the endpoint's leases; a lease it grants is added to `local`, in use. */
  async ask({ endpointKey, force, probe, maxPerSecond, job }: EndpointCall, local: LocalLeases): Promise<Admission> {
    const { delivery } = this.environment;
    this.sequence += 1;
    const id = `${this.workerId}:${this.sequence}`;
    const sentAt = Date.now();
    const answer = await acquireEndpointLease(this.redis, this.keys, endpointKey, {
      id,
      ttlMs: delivery.timeoutMs + LEASE_MARGIN_MS,
      limit: delivery.endpointConcurrency,
      originLimit: delivery.originConcurrency,
      maxPerSecond,
      force,
      worker: this.workerId,
      job,
      mayProbe: probe === true,
    });
    if (answer.verdict === 'acquired' || answer.verdict === 'probe' || answer.verdict === 'busy') local.learnShare(answer.workerShare, Date.now(), WAIT_MARK_MS);
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
        this.leases.track(lease);
        local.add(lease, Date.now());
        return admitted(endpointKey, lease, maxPerSecond, answer.verdict === 'probe');
      }
      case 'busy':
        return { kind: 'busy', pace: null, oldestCallMs: answer.oldestCallMs };
      case 'paced':
        return { kind: 'busy', pace: { at: Date.now() + (answer.until - answer.serverNow) } };
      case 'open':
      case 'probing': {
        const breaker = {
          retryAt: new Date(Date.now() + Math.max(0, answer.until - answer.serverNow)),
          consecutiveFailures: answer.consecutiveFailures,
          lastError: answer.lastError,
        };
        if (answer.verdict === 'open') this.openBreakers.remember(endpointKey, breaker, Date.now());
        return openAdmission(breaker, answer.verdict === 'probing');
      }
    }
  }

  /** Frees the lease in Redis and feeds the breaker (and the pace); a breaker this closes is forgotten here. */
  async giveBack(lease: EndpointLease, signal: BreakerSignal, error: string | null, slowDown: { retryAfterMs: number | null } | null): Promise<ReleaseAnswer> {
    const { delivery } = this.environment;
    const answer = await releaseEndpointLease(this.redis, this.keys, lease.endpointKey, {
      leaseId: lease.id,
      signal,
      failureThreshold: delivery.breakerFailureThreshold,
      cooldownMs: delivery.breakerCooldownMs,
      error,
      slowDown,
      maxPerSecond: lease.maxPerSecond,
    });
    if (answer.change === 'closed') this.openBreakers.forget(lease.endpointKey);
    return answer;
  }
}
