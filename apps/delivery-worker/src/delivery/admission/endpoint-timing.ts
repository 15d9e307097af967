import { setBounded } from '@app/runtime';
import { PLACE_GRACE_MS } from './pace-schedule';
import { DEFAULT_CALL_MS, MAX_PACED_ENDPOINTS, MIN_BUSY_DELAY_MS, type Pace, type PacedAnswer, pacedDelay, pacedPlaceDelay } from './busy-delay';

/**
 * A job waits in the process for one of its leases only when one is expected within this long, and a
 * worker refused a lease counts as wanting the endpoint for as long (WAIT_MARK_MS). Long enough that a
 * burst to one endpoint waits for the leases its calls give back instead of going round the delayed
 * set; short enough that a job held here, which holds one of its shard's jobs in hand, is not held long.
 * The measurements behind the value: docs/lanes.md, "Admission's tuned values".
 */
export const MAX_EXPECTED_WAIT_MS = 2_000;
/** A job that waited that long for a lease expected in time gives up (sent back through Redis) a quarter later. */
export const MAX_WAIT_MS = MAX_EXPECTED_WAIT_MS * 1.25;
/**
 * No new job waits while one of the endpoint's calls here has run this long, or three average calls if
 * that is longer: the endpoint has started to hang. A quarter of the longest wait, so the jobs already
 * waiting behind the stuck call are sent back with most of their wait still ahead, not at its end.
 */
export const STUCK_CALL_MS = MAX_EXPECTED_WAIT_MS / 4;
/**
 * A job whose place in the pace starts within this long waits for it in the worker, holding no call,
 * and a job held by the pace is sent back this long before its place: a fifth of the grace a place
 * keeps (PLACE_GRACE_MS), so a job picked up from the delayed set up to the rest of the grace late
 * still finds its place.
 */
export const NEAR_PLACE_MS = PLACE_GRACE_MS / 5;
/**
 * A job polling for a lease held by other workers asks again after about one call, within these bounds:
 * no less often than the shortest trip through the delayed set would bring it back (MIN_BUSY_DELAY_MS),
 * and no more than ten times as often (each ask is a Redis script).
 */
const MAX_POLL_MS = MIN_BUSY_DELAY_MS;
const MIN_POLL_MS = MAX_POLL_MS / 10;

/**
 * How long this process's calls take, per endpoint and all together, and what EndpointAdmission derives
 * from it: how long a call is expected to take, when one looks stuck, how often to poll for a lease, and
 * when a job sent back should return (busy-delay.ts).
 */
export class EndpointTiming {
  private readonly paces = new Map<string, Pace>();
  /**
   * Average call of this process, every endpoint together: what an endpoint it has not timed yet is
   * expected to take, so a first burst to a fast endpoint waits here for its leases as a known one would
   * instead of being spaced by a fixed guess through the delayed set.
   */
  private callAverageMs = DEFAULT_CALL_MS;

  constructor(private readonly endpointConcurrency: number) {}

  /** A call of the endpoint took this long. */
  noteCall(endpointKey: string, durationMs: number): void {
    const pace = this.paceOf(endpointKey);
    pace.averageMs = pace.averageMs * 0.8 + durationMs * 0.2;
    this.callAverageMs = this.callAverageMs * 0.8 + durationMs * 0.2;
  }

  /** How long a call of this endpoint is expected to take: its own average here, else the process's. */
  expectedCallMs(endpointKey: string): number {
    return this.paces.get(endpointKey)?.averageMs ?? this.callAverageMs;
  }

  /** A call of this endpoint running longer than this looks stuck (STUCK_CALL_MS, or three expected calls). */
  stuckAfterMs(endpointKey: string): number {
    return Math.max(STUCK_CALL_MS, 3 * this.expectedCallMs(endpointKey));
  }

  /** How long a job polling for one of the endpoint's leases waits between asks: about one call. */
  pollMs(endpointKey: string): number {
    return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.round(this.expectedCallMs(endpointKey))));
  }

  /**
   * How long a job that found this endpoint full (`pace` null), or held by its pace, should wait before
   * trying again: behind the jobs this process already sent back for the same reason (busy-delay.ts).
   * `oldestCallMs`: how long the endpoint's oldest call in flight has run. Once that looks stuck, the
   * line is spaced by it rather than by the average of the calls that ended: a hanging endpoint frees
   * no lease before one of its calls times out, and spaced by the average (a few ms) its backlog would
   * spend the worker's CPU on trips through Redis that cannot succeed.
   */
  busyDelayMs(endpointKey: string, pace: PacedAnswer | null = null, oldestCallMs = 0): number {
    const now = Date.now();
    if (pace) return pacedPlaceDelay(pace, now, NEAR_PLACE_MS);
    const line = this.paceOf(endpointKey);
    const callMs = oldestCallMs > this.stuckAfterMs(endpointKey) ? Math.max(line.averageMs, oldestCallMs) : line.averageMs;
    return pacedDelay(line, now, this.endpointConcurrency, callMs);
  }

  private paceOf(endpointKey: string): Pace {
    let pace = this.paces.get(endpointKey);
    if (!pace) {
      pace = { averageMs: this.callAverageMs, nextAt: 0 };
      setBounded(this.paces, endpointKey, pace, MAX_PACED_ENDPOINTS);
    }
    return pace;
  }
}
