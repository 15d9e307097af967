import { histogramQuantile, LATENCY_BOUNDS_MS, LATENCY_BUCKETS } from './delivery-rollup';

function histogram(entries: Record<number, number>): number[] {
  const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
  for (const [index, count] of Object.entries(entries)) counts[Number(index)] = count;
  return counts;
}

describe('histogramQuantile', () => {
  it('is null for an empty histogram', () => {
    expect(histogramQuantile(histogram({}), 0.5)).toBeNull();
  });

  it('interpolates inside the bucket that holds the rank', () => {
    // 100 values in [50, 100): the median sits half way through that bucket.
    const counts = histogram({ 4: 100 });
    expect(LATENCY_BOUNDS_MS[3]).toBe(50);
    expect(LATENCY_BOUNDS_MS[4]).toBe(100);
    expect(histogramQuantile(counts, 0.5)).toBe(75);
    expect(histogramQuantile(counts, 0.99)).toBe(100);
  });

  it('puts p50, p95 and p99 into the buckets where they fall', () => {
    // 90 fast (< 5 ms), 9 around a second, 1 slow (20-30 s).
    const counts = histogram({ 0: 90, 8: 9, 12: 1 });
    expect(histogramQuantile(counts, 0.5)).toBeLessThan(5);
    const p95 = histogramQuantile(counts, 0.95) ?? 0;
    expect(p95).toBeGreaterThanOrEqual(1_000);
    expect(p95).toBeLessThan(2_000);
    const p99 = histogramQuantile(counts, 0.99) ?? 0;
    expect(p99).toBeLessThanOrEqual(2_000);
    expect(histogramQuantile(counts, 1)).toBe(30_000);
  });

  it('answers the lower bound of the open top bucket', () => {
    expect(histogramQuantile(histogram({ [LATENCY_BUCKETS - 1]: 3 }), 0.5)).toBe(LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]);
  });
});
