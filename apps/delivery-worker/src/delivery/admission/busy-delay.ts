/** How this process paces jobs that found an endpoint full. */
export interface Pace {
  /** Moving average of this endpoint's call durations here. */
  averageMs: number;
  /** When the last job sent back is due to return. */
  nextAt: number;
}

export const MIN_BUSY_DELAY_MS = 50;
export const MAX_BUSY_DELAY_MS = 30_000;
export const DEFAULT_CALL_MS = 100;
export const MAX_PACED_ENDPOINTS = 10_000;

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
