import { books, rollups } from '@app/persistence';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** The granularities the event tallies and delivery rollups keep. */
export type BookGranularity = 'minute' | 'hour';

/** The first bucket boundary of `stepMs` at or after `since`. */
export function firstWhole(since: Date, stepMs: number): Date {
  return new Date(Math.ceil(since.getTime() / stepMs) * stepMs);
}

/** Adds tallies of several windows status by status (histograms element-wise). */
export function mergeTallies(...parts: readonly books.StatusTally[][]): Map<string, { events: number; latencyCounts: number[] }> {
  const merged = new Map<string, { events: number; latencyCounts: number[] }>();
  for (const rows of parts) {
    for (const row of rows) {
      const entry = merged.get(row.status) ?? { events: 0, latencyCounts: new Array<number>(rollups.LATENCY_BUCKETS).fill(0) };
      entry.events += Number(row.events);
      row.latency_counts?.forEach((count, index) => (entry.latencyCounts[index] += Number(count)));
      merged.set(row.status, entry);
    }
  }
  return merged;
}
