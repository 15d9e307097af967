import { setBounded } from '@app/runtime';
import { PLACE_GRACE_MS } from './pace-schedule';
import { DEFAULT_CALL_MS, MAX_PACED_ENDPOINTS, type Pace, type PacedAnswer, pacedDelay, pacedPlaceDelay } from './busy-delay';

/**
 * No new job waits while one of the endpoint's calls here has run this long, or three average calls if
 * that is longer: the endpoint has started to hang, and its waiters would only hold its shard's job
 * slots until they time out.
 */
export const STUCK_CALL_MS = 500;
/**
 * A job whose place in the pace starts within this long waits for it in the worker, holding no turn,
 * and a job held by the pace is sent back this long before its place: a fifth of the grace a place
 * keeps (PLACE_GRACE_MS), so a job picked up from the delayed set up to the rest of the grace late
 * still finds its place.
 */
export const NEAR_PLACE_MS = PLACE_GRACE_MS / 5;
/** A job polling for a slot held by other workers asks again after about one call, within these bounds. */
const MIN_POLL_MS = 5;
const MAX_POLL_MS = 50;

/**
 * How long this process's calls take, per endpoint and all together, and what EndpointAdmission derives
 * from it: how long a call is expected to take, when one looks stuck, how often to poll for a slot, and
 * when a job sent back should return (busy-delay.ts).
 */
export class EndpointTiming {
  private readonly paces = new Map<string, Pace>();
  /**
   * Average call of this process, every endpoint together: what an endpoint it has not timed yet is
   * expected to take. With a fixed 100 ms guess, a first burst to a fast endpoint (190 jobs, 10 slots)
   * let only half its jobs wait here and spaced the others 10 ms apart through the delayed set: quick
   * isolation (1,000 events to a new endpoint) put back 30–70 jobs and ran at 990–1,854 events/s; with
   * this, none and 1,805–2,028 events/s (one-endpoint: 60 put back, 0.61× its baseline → none, 0.87–0.88×).
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

  /** How long a job polling for one of the endpoint's slots waits between asks: about one call. */
  pollMs(endpointKey: string): number {
    return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.round(this.expectedCallMs(endpointKey))));
  }

  /**
   * How long a job that found this endpoint full (`pace` null), or held by its pace, should wait before
   * trying again: behind the jobs this process already sent back for the same reason (busy-delay.ts).
   * `oldestCallMs`: how long the endpoint's oldest call in flight has run. Once that looks stuck, the
   * line is spaced by it rather than by the average of the calls that ended: a hanging endpoint frees
   * no slot before one of its calls times out. Spaced by the average (a few ms), a hanging endpoint's
   * backlog of 5,000 jobs came back 12,000 times a second for the whole DELIVERY_TIMEOUT_MS, the
   * worker's CPU spent on trips through Redis that could not succeed.
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
