/** How this process lines up the jobs it sends back for one endpoint. */
export interface Pace {
  /** Moving average of this endpoint's call durations here. */
  averageMs: number;
  /** When the last job sent back for a full endpoint is due to return. */
  nextAt: number;
  /** When the last job sent back for the endpoint's pace is due to return (its slot of the pace). */
  pacedAt: number;
}

export const MIN_BUSY_DELAY_MS = 50;
export const MAX_BUSY_DELAY_MS = 30_000;
export const DEFAULT_CALL_MS = 100;
export const MAX_PACED_ENDPOINTS = 10_000;
/**
 * Slots of the pace are this much longer than its interval: a job is picked up a little after its slot,
 * and the pace (GCRA, with no burst under 40 calls a second) counts the next slot from that late start,
 * so without a margin every such delay would make the next job early and send it round again.
 */
export const PACED_SLOT_MARGIN = 0.1;

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
 * When a job held by the endpoint's pace (max_per_second, or a 429/503's slower pace) should come back:
 * at its own slot, one interval behind the last job this process sent back for the pace, or at the
 * pace's next opening (`waitMs`) when that is later. So a paced backlog costs about one trip through
 * Redis's delayed set per job, instead of every job coming back at each opening where one starts. The
 * pace across workers stays Redis's (the acquire script); this only chooses when a job asks again.
 */
export function pacedSlotDelay(pace: Pace, now: number, waitMs: number, intervalMs: number): number {
  const spacing = intervalMs * (1 + PACED_SLOT_MARGIN);
  const due = Math.min(Math.max(now + waitMs, pace.pacedAt + spacing), now + MAX_BUSY_DELAY_MS);
  pace.pacedAt = due;
  return Math.max(1, Math.round(due - now));
}
