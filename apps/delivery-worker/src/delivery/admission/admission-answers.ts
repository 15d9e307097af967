import type { PacedAnswer } from './busy-delay';
import type { HeldLease } from './local-leases';
import type { OpenBreaker } from './open-breakers';

export interface EndpointLease {
  endpointKey: string;
  id: string;
  probe?: boolean;
  /** The endpoint's max_per_second when the lease was taken (its release adjusts the pace against it). */
  maxPerSecond: number | null;
}

/** What a call needs to know of its endpoint to be admitted. */
export interface EndpointCall {
  endpointKey: string;
  /** A manual redelivery's first call: passes an open breaker, never a full endpoint or its pace. */
  force: boolean;
  /** The delivery sent as its endpoint's half-open probe: the only one that may end the breaker's cooldown. */
  probe?: boolean;
  maxPerSecond: number | null;
  /** The job asking (its step's id): a job told to wait for the pace owns a place in it under this name (none: it is only told when the next place is). */
  job?: string;
}

export type Admission =
  | { kind: 'admitted'; lease: EndpointLease }
  /**
   * Every lease of this endpoint is in use (`pace` null: come back shortly), or its pace lets the next
   * call start only at `pace.at`, the place this job now owns in its schedule. `oldestCallMs`, when Redis
   * refused: the age of the endpoint's oldest lease, any worker's; a reused lease's age includes the
   * calls it served before (up to REUSE_WINDOW_MS), so the call running on it is between that age less
   * the window and that age. Each reader takes the bound on its safe side: whether to poll for a lease
   * takes the whole age (never poll an endpoint whose call may be stuck), the spacing of jobs sent back
   * takes off the window (never space a healthy endpoint's line by calls that ended).
   */
  | { kind: 'busy'; pace: PacedAnswer | null; oldestCallMs?: number }
  /** The breaker is open (the attempt fails without a call), or a half-open probe is in flight (`probing`: wait up to `waitMs`). */
  | { kind: 'open'; waitMs: number; retryAt: Date; consecutiveFailures: number; lastError: string | null; probing: boolean };

/** A lease of this process admits the call (from Redis, idle here, or handed over by an ending call). */
export function admitted(endpointKey: string, lease: HeldLease, maxPerSecond: number | null, probe = false): Admission {
  return { kind: 'admitted', lease: { endpointKey, id: lease.id, probe, maxPerSecond } };
}

/** The breaker is open (or probing) as Redis said, now or a moment ago. */
export function openAdmission(breaker: OpenBreaker, probing: boolean): Admission {
  return { kind: 'open', waitMs: Math.max(0, breaker.retryAt.getTime() - Date.now()), ...breaker, probing };
}
