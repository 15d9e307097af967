/**
 * Delivery rollups: what the worker's outcome batches did, summed per minute and per hour, per account
 * and for all accounts together (account_id 0), so `GET /admin/v1/stats/series` reads at most a few
 * thousand small rows instead of scanning events or attempts. The rows do not reference events, so
 * retention and any re-layout of the events tables leave them alone.
 */

/** account_id of the rows that sum every account (account ids are positive). */
export const ALL_ACCOUNTS = 0;

/**
 * Upper bounds (ms, exclusive) of the latency histogram's buckets; one more bucket holds everything
 * above the last bound. Roughly 1-2-5 steps from 5 ms to a day: percentiles are exact to a bucket.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  1_200_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/**
 * SQL for the histogram bucket (0 … LATENCY_BUCKETS − 1) of a delivery's latency, created → delivered,
 * in milliseconds; negative latencies (clock steps) count as 0. One definition for every rollup.
 */
export function latencyBucketSql(deliveredAt: string, createdAt: string): string {
  return `width_bucket(GREATEST(EXTRACT(EPOCH FROM (${deliveredAt} - ${createdAt})) * 1000, 0), ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[])`;
}

/**
 * SQL for the lower bound of latency bucket `bucket`, as an interval: a time that far after the start
 * falls in that bucket again, so a group of deliveries in one bucket can be booked as one.
 */
export function latencyBucketFloorSql(bucket: string): string {
  return `(ARRAY[0, ${LATENCY_BOUNDS_MS.join(',')}]::int[])[${bucket} + 1] * interval '1 millisecond'`;
}

/** The two granularities stored: 1h and 1d series read the hourly rows, 1m series the minute rows. */
export type RollupGranularity = 'minute' | 'hour';

/**
 * The q-quantile of a latency histogram, interpolating linearly inside the bucket that holds it (as
 * Prometheus' histogram_quantile does); the open top bucket answers its lower bound. null when empty.
 */
export function histogramQuantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let index = 0; index < counts.length; index += 1) {
    const count = counts[index];
    if (count > 0 && below + count >= rank) {
      const lower = index === 0 ? 0 : LATENCY_BOUNDS_MS[index - 1];
      if (index >= LATENCY_BOUNDS_MS.length) return lower;
      const upper = LATENCY_BOUNDS_MS[index];
      return Math.round(lower + ((upper - lower) * (rank - below)) / count);
    }
    below += count;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];
}

/** p50, p95 and p99 of a latency histogram (see histogramQuantile). */
export function histogramPercentiles(counts: readonly number[]): { p50: number | null; p95: number | null; p99: number | null } {
  return { p50: histogramQuantile(counts, 0.5), p95: histogramQuantile(counts, 0.95), p99: histogramQuantile(counts, 0.99) };
}
