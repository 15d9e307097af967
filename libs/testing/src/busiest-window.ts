/** The most arrivals (sorted epoch ms) in any half-open window of `windowMs`: a pace's bound is over any window (CONTRACT §9). */
export function busiestWindow(arrivals: readonly number[], windowMs: number): number {
  let busiest = 0;
  let to = 0;
  for (let from = 0; from < arrivals.length; from += 1) {
    while (to < arrivals.length && arrivals[to] < arrivals[from] + windowMs) to += 1;
    busiest = Math.max(busiest, to - from);
  }
  return busiest;
}
