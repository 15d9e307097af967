import { Inject, Injectable, Logger } from '@nestjs/common';
import { ENVIRONMENT, type Environment, inSpan, loggableErrorText, setBounded } from '@app/runtime';
import { breakerOpens } from '../delivery.metrics';
import type { EndpointLease } from './admission-answers';
import { EndpointAdmission } from './endpoint-admission';
import type { BreakerSignal } from './lease-scripts';

/** What a delivery asks the door: its job, its endpoint, and how it may pass. */
export interface AdmitRequest {
  /** The job's step id (deliveryJobId): a job told to wait for the pace owns a place under it. */
  job: string;
  /** Its destination's endpoint (DestinationSettings.endpointKey); null: the target is not a URL (the call fails by itself). */
  endpointKey: string | null;
  /** A manual redelivery's first call: passes an open breaker, never a full endpoint or its pace. */
  force: boolean;
  /** The held delivery sent as the half-open probe (CONTRACT §5): the only one the cooldown's end lets through. */
  probe: boolean;
  maxPerSecond: number | null;
}

/** A lease for one call: give it back with the call's outcome (`release`). `endpointKey` null: the URL is not one (the call fails by itself). */
export interface Lease {
  endpointKey: string | null;
  held: EndpointLease | null;
}

/** Why a job waits without an attempt (the jobs-without-call metric's reason). */
export type WaitReason = 'paced' | 'busy' | 'breaker_probing';

/** The door's answer: call now, come back in `ms` (no attempt spent), or the breaker is open (the delivery is held: no call, no attempt). */
export type Entry =
  | { kind: 'admitted'; lease: Lease }
  | { kind: 'wait'; ms: number; reason: WaitReason }
  | { kind: 'open'; retryAt: Date; consecutiveFailures: number; lastError: string | null };

/** What a call's outcome tells the endpoint: the breaker's signal, the error, the call's duration, a 429/503's slow-down. */
export interface CallOutcome {
  signal: BreakerSignal;
  error: string | null;
  durationMs: number | null;
  slowDown: { retryAfterMs: number | null } | null;
}

/** A call that opened its endpoint's breaker, or closed it after it was open. */
export interface BreakerChange {
  change: 'opened' | 'closed';
  consecutiveFailures: number;
}

/** Remembered jobs that waited for a full endpoint, at most this many. */
const MAX_REMEMBERED_WAITS = 10_000;
/** A half-open probe's verdict is awaited at least this long (spread down to half): shorter, the job only comes back to wait again. */
const MIN_PROBE_WAIT_MS = 250;

/**
 * The one door a delivery passes before calling its endpoint (see index.ts for the words). `admit`
 * answers admitted (with a lease), wait (how long) or open (the breaker); `release` gives the lease back
 * with the call's outcome, which feeds the breaker, the pace and the endpoint's timing. Never throws on
 * release: the endpoint only learns from it, and a lease not given back expires by itself.
 */
@Injectable()
export class AdmissionDoor {
  private readonly logger = new Logger(AdmissionDoor.name);
  /** Job → endpoint it last found full here: a shortcut past loading, never a decision. */
  private readonly waitedFull = new Map<string, string>();

  constructor(
    private readonly leases: EndpointAdmission,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /**
   * A job that found its endpoint full, and the endpoint is still full with this process's own calls:
   * how long to wait again, without loading anything (a burst to one endpoint cycles its backlog). Null: go on.
   */
  waitBeforeLoad(job: string): number | null {
    const endpointKey = this.waitedFull.get(job);
    if (endpointKey === undefined || !this.leases.isLocallyFull(endpointKey)) return null;
    this.waitedFull.delete(job);
    return this.remember(job, endpointKey, this.leases.busyDelayMs(endpointKey));
  }

  /** May this call start now? Throws WorkerStoppingError once the worker is stopping. */
  async admit(request: AdmitRequest): Promise<Entry> {
    this.waitedFull.delete(request.job);
    const endpointKey = request.endpointKey;
    if (endpointKey === null) {
      // Not a URL at all: nothing to guard; the call fails by itself and is recorded like any other.
      await this.leases.calls.take();
      return { kind: 'admitted', lease: { endpointKey: null, held: null } };
    }
    const answer = await inSpan('delivery.admit', () =>
      this.leases.acquire({ endpointKey, force: request.force, probe: request.probe, maxPerSecond: request.maxPerSecond, job: request.job }),
    );
    switch (answer.kind) {
      case 'admitted':
        return { kind: 'admitted', lease: { endpointKey, held: answer.lease } };
      case 'busy':
        if (answer.pace) return { kind: 'wait', ms: this.leases.busyDelayMs(endpointKey, answer.pace), reason: 'paced' };
        return { kind: 'wait', ms: this.remember(request.job, endpointKey, this.leases.busyDelayMs(endpointKey, null, answer.oldestCallMs)), reason: 'busy' };
      case 'open':
        if (!answer.probing) return { kind: 'open', retryAt: answer.retryAt, consecutiveFailures: answer.consecutiveFailures, lastError: answer.lastError };
        // Half open, and another worker's probe is deciding: wait for its verdict (at most the probe's
        // lease) rather than be skipped or pile onto an endpoint that may still be down.
        return { kind: 'wait', ms: this.probeWaitMs(answer.waitMs), reason: 'breaker_probing' };
    }
  }

  /**
   * Gives the lease back with the call's outcome (once per admitted lease); answers what it did to the
   * breaker when it opened or closed it (null otherwise, and when Redis could not be told).
   */
  async release(lease: Lease, outcome: CallOutcome): Promise<BreakerChange | null> {
    if (lease.held === null) {
      this.leases.calls.give();
      return null;
    }
    const { held } = lease;
    try {
      const answer = await this.leases.release(held, outcome.signal, outcome.error, outcome.durationMs, outcome.slowDown);
      await this.leases.indexChange(held.endpointKey, answer.change);
      if (answer.change === 'opened') {
        breakerOpens.inc();
        this.logger.warn(`circuit opened for ${held.endpointKey} after ${answer.consecutiveFailures} consecutive failures (${outcome.error ?? 'failed'})`);
        return { change: 'opened', consecutiveFailures: answer.consecutiveFailures };
      }
      if (answer.change === 'closed') {
        this.logger.log(`circuit closed for ${held.endpointKey}`);
        return { change: 'closed', consecutiveFailures: 0 };
      }
    } catch (error) {
      this.logger.warn(`could not release the endpoint lease of ${held.endpointKey}: ${loggableErrorText(error)}`);
    }
    return null;
  }

  /** No call starts from now on (shutdown): admits end with WorkerStoppingError. */
  stopCalls(): void {
    this.leases.calls.stop();
  }

  /** Shutdown: jobs waiting for a lease start no call, idle leases go back to Redis (resolves once they have). */
  stop(): Promise<void> {
    return this.leases.stop();
  }

  private remember(job: string, endpointKey: string, ms: number): number {
    setBounded(this.waitedFull, job, endpointKey, MAX_REMEMBERED_WAITS);
    return ms;
  }

  private probeWaitMs(probeLeftMs: number): number {
    const ceiling = Math.max(MIN_PROBE_WAIT_MS, this.environment.delivery.breakerCooldownMs);
    return Math.round(Math.min(Math.max(probeLeftMs, MIN_PROBE_WAIT_MS), ceiling) * (0.5 + Math.random() * 0.5));
  }
}
