import { PACE_CLIMB_SECONDS, UNPACED_START_PER_SECOND } from '@app/runtime';

/** How this process lines up the jobs it sends back for one endpoint. */
export interface Pace {
  /** Moving average of this endpoint's call durations here. */
  averageMs: number;
  /** When the last job sent back for a full endpoint is due to return. */
  nextAt: number;
  /** When the last job sent back for the endpoint's pace is due to return (its slot of the pace). */
  pacedAt: number;
  /** The pace (calls a second) expected at that last slot: a backed-off pace climbs as its calls succeed. */
  lineRate: number;
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
 * When a job held by the endpoint's pace (max_per_second, or a 429/503's slower pace) should come back:
 * at its own slot, one interval behind the last job this process sent back for the pace, or at the
 * pace's next opening (`waitMs`) when that is later. So a paced backlog costs about one trip through
 * Redis's delayed set per job, instead of every job coming back at each opening where one starts. The
 * pace across workers stays Redis's (the acquire script); this only chooses when a job asks again.
 *
 * A backed-off pace climbs back by `climbPerSecond` calls a second per second while its calls succeed
 * (endpoint-pace.ts), up to `ceilingPerSecond`: the line follows that climb, each slot spaced by the
 * pace expected at it. Spaced at the pace of the moment the job was sent back, a drain after an outage
 * kept the outage's slowest pace (6.25 calls a second) for its whole backlog, long after Redis allowed
 * 70. A job that comes back too early (the receiver refused again, the pace did not climb) is only paced
 * once more and takes a later slot.
 */
export function pacedSlotDelay(pace: Pace, now: number, { waitMs, intervalMs, climbPerSecond, ceilingPerSecond }: PacedAnswer): number {
  const current = intervalMs > 0 ? 1000 / intervalMs : 0;
  const opening = now + waitMs;
  const lineRate = Math.max(pace.lineRate, current);
  const spacing = lineRate > 0 ? (1000 / lineRate) * (1 + PACED_SLOT_MARGIN) : 0;
  let due: number;
  if (pace.pacedAt + spacing <= opening) {
    due = opening;
    pace.lineRate = current;
  } else {
    due = pace.pacedAt + spacing;
    pace.lineRate = Math.min(ceilingPerSecond, lineRate + (climbPerSecond * spacing) / 1000);
  }
  due = Math.min(due, now + MAX_BUSY_DELAY_MS);
  pace.pacedAt = due;
  return Math.max(1, Math.round(due - now));
}

/**
 * The endpoint's pace held the call: it may start in `waitMs`, one call every `intervalMs` after that,
 * and a backed-off pace climbs by `climbPerSecond` calls a second per second of successes up to
 * `ceilingPerSecond` (0 and Infinity for a fixed max_per_second).
 */
export interface PacedAnswer {
  waitMs: number;
  intervalMs: number;
  climbPerSecond: number;
  ceilingPerSecond: number;
}

/** The acquire script's paced answer, with how the endpoint's pace will climb (a 429/503's backed-off pace is below its ceiling). */
export function pacedAnswer(waitMs: number, intervalMs: number, maxPerSecond: number | null): PacedAnswer {
  const ceiling = maxPerSecond ?? UNPACED_START_PER_SECOND;
  const backedOff = intervalMs > 0 && 1000 / intervalMs < ceiling;
  return {
    waitMs,
    intervalMs,
    climbPerSecond: backedOff ? Math.max(1, ceiling / PACE_CLIMB_SECONDS) : 0,
    ceilingPerSecond: backedOff ? ceiling : Infinity,
  };
}
