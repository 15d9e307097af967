/** How this process lines up the jobs it sends back for one endpoint. */
export interface Pace {
  /** Moving average of this endpoint's call durations here. */
  averageMs: number;
  /** When the last job sent back for a full endpoint is due to return. */
  nextAt: number;
}

/** The shortest trip through the delayed set: less would only bring a job back to the same full endpoint. */
export const MIN_BUSY_DELAY_MS = 50;
/** The longest: a job comes back at least this often to see what changed (settings, breaker, pace). */
export const MAX_BUSY_DELAY_MS = 30_000;
/** A call's duration before any call of the process was timed. */
export const DEFAULT_CALL_MS = 100;
/** Endpoints whose call times and lines this process remembers (the oldest are forgotten). */
export const MAX_PACED_ENDPOINTS = 10_000;
/**
 * When a job that found its endpoint full should come back. Jobs sent back are lined up behind each
 * other, spaced by the time the endpoint takes to free a lease (average call time / concurrency share),
 * so a burst of N jobs to one endpoint returns about when each can be served instead of bouncing
 * through Redis over and over. ±10 % spread keeps workers from returning in lockstep. `callMs` is how
 * long a call is taken to last (the endpoint's average here unless the caller knows better).
 */
export function pacedDelay(pace: Pace, now: number, endpointConcurrency: number, callMs = pace.averageMs, random: () => number = Math.random): number {
  const spacing = callMs / Math.max(1, endpointConcurrency);
  const due = Math.min(Math.max(now + MIN_BUSY_DELAY_MS, pace.nextAt + spacing), now + MAX_BUSY_DELAY_MS);
  pace.nextAt = due;
  return Math.round((due - now) * (0.9 + random() * 0.2));
}

/**
 * The endpoint's pace held the call: the job owns the place in the pace's schedule that starts at `at`
 * (local epoch ms, pace-schedule.ts), and comes back then. A place further away than MAX_BUSY_DELAY_MS
 * is asked for again at that bound (it is kept; a changed max_per_second voids it meanwhile).
 */
export interface PacedAnswer {
  at: number;
}

/**
 * When a job held by the pace comes back: `leadMs` before its own place, so that a job picked up from
 * the delayed set a little late still reaches its place in time (one that is on time waits the lead
 * out in the worker, EndpointAdmission).
 */
export function pacedPlaceDelay({ at }: PacedAnswer, now: number, leadMs = 0): number {
  return Math.max(1, Math.min(Math.round(at - leadMs - now), MAX_BUSY_DELAY_MS));
}
