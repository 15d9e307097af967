import { addStageSamples, bucketQuantileMs, stageSplit, type StageSnapshot } from './stage-histograms';

describe('stage histograms read from /metrics buckets', () => {
  const bounds = [0.001, 0.002, 0.005, Infinity];

  it('interpolates within the bucket the rank falls in, in ms', () => {
    // 10 at ≤ 1 ms, 10 more at ≤ 2 ms: the median is the top of the first bucket, p75 halfway through the second.
    expect(bucketQuantileMs(bounds, [10, 20, 20, 20], 0.5)).toBeCloseTo(1, 6);
    expect(bucketQuantileMs(bounds, [10, 20, 20, 20], 0.75)).toBeCloseTo(1.5, 6);
    expect(bucketQuantileMs(bounds, [0, 0, 0, 0], 0.5)).toBe(0);
  });

  it('reads a value past the last finite bound as that bound', () => {
    expect(bucketQuantileMs(bounds, [0, 0, 0, 5], 0.99)).toBe(5);
  });

  it('splits the interval between two snapshots', () => {
    const before: StageSnapshot = new Map([['enqueued_taken', { bounds, counts: [100, 100, 100, 100], sum: 0.05 }]]);
    const after: StageSnapshot = new Map([['enqueued_taken', { bounds, counts: [100, 104, 110, 110], sum: 0.08 }]]);
    const split = stageSplit(before, after);
    expect(split.enqueued_taken.count).toBe(10);
    expect(split.enqueued_taken.meanMs).toBeCloseTo(3, 6);
    expect(split.enqueued_taken.p50).toBeCloseTo(2 + 3 * (1 / 6), 6);
    expect(split.accepted_committed.count).toBe(0);
  });

  it('reads prom-client\'s exposition (le first) and adds up the apps', () => {
    const text = [
      '# TYPE callback_stage_seconds histogram',
      'callback_stage_seconds_bucket{le="0.001",stage="enqueued_taken"} 3',
      'callback_stage_seconds_bucket{le="+Inf",stage="enqueued_taken"} 4',
      'callback_stage_seconds_sum{stage="enqueued_taken"} 0.01',
      'callback_stage_seconds_count{stage="enqueued_taken"} 4',
      'callback_stage_seconds_bucket{le="+Inf",stage="no_such_stage"} 9',
    ].join('\n');
    const snapshot = addStageSamples(addStageSamples(new Map(), text), text);
    expect(snapshot.get('enqueued_taken')).toEqual({ bounds: [0.001, Infinity], counts: [6, 8], sum: 0.02 });
    expect(snapshot.size).toBe(1);
  });
});
