import { MAX_BUSY_DELAY_MS, MIN_BUSY_DELAY_MS, type Pace, type PacedAnswer, pacedDelay, pacedSlotDelay } from './busy-delay';

/** A pace's answer: the next call in `waitMs`, one every `intervalMs`, climbing as given (fixed by default). */
function slot(waitMs: number, intervalMs: number, climbPerSecond = 0, ceilingPerSecond = Infinity): PacedAnswer {
  return { waitMs, intervalMs, climbPerSecond, ceilingPerSecond };
}

const NOW = 1_000_000;
const middle = () => 0.5;

describe('pacedDelay', () => {
  it('sends the first job back for the minimum delay', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0, pacedAt: 0, lineRate: 0 };
    expect(pacedDelay(pace, NOW, 10, undefined, middle)).toBe(MIN_BUSY_DELAY_MS);
    expect(pace.nextAt).toBe(NOW + MIN_BUSY_DELAY_MS);
  });

  it('lines later jobs up behind it, one slot-time apart', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0, pacedAt: 0, lineRate: 0 };
    const delays = Array.from({ length: 5 }, () => pacedDelay(pace, NOW, 10, undefined, middle));
    // 100 ms per call over 10 slots: a slot frees every 10 ms.
    expect(delays).toEqual([50, 60, 70, 80, 90]);
  });

  it('starts over once the line has drained', () => {
    const pace: Pace = { averageMs: 100, nextAt: NOW + 500, pacedAt: 0, lineRate: 0 };
    expect(pacedDelay(pace, NOW + 10_000, 10, undefined, middle)).toBe(MIN_BUSY_DELAY_MS);
  });

  it('never parks a job longer than the maximum, and spreads by ±10 %', () => {
    const pace: Pace = { averageMs: 10_000, nextAt: NOW + 10 * MAX_BUSY_DELAY_MS, pacedAt: 0, lineRate: 0 };
    expect(pacedDelay(pace, NOW, 1, undefined, middle)).toBe(MAX_BUSY_DELAY_MS);
    const low = pacedDelay({ averageMs: 100, nextAt: 0, pacedAt: 0, lineRate: 0 }, NOW, 10, undefined, () => 0);
    const high = pacedDelay({ averageMs: 100, nextAt: 0, pacedAt: 0, lineRate: 0 }, NOW, 10, undefined, () => 0.999999);
    expect(low).toBe(Math.round(MIN_BUSY_DELAY_MS * 0.9));
    expect(high).toBe(Math.round(MIN_BUSY_DELAY_MS * 1.1));
  });

  it('spaces the line by the call time it is given instead of the average', () => {
    const pace: Pace = { averageMs: 5, nextAt: 0, pacedAt: 0, lineRate: 0 };
    // Ten calls have run for 4 s: a slot frees no sooner than one of them ends (the first goes back for the minimum).
    const delays = Array.from({ length: 3 }, () => pacedDelay(pace, NOW, 10, 4_000, middle));
    expect(delays).toEqual([50, 450, 850]);
  });
});

describe('pacedSlotDelay', () => {
  const pace = (): Pace => ({ averageMs: 100, nextAt: 0, pacedAt: 0, lineRate: 0 });

  it('sends each job held by the pace to its own slot, an interval (and a tenth) behind the one before', () => {
    const paced = pace();
    // The pace opens in 30 ms, then lets a call start every 100 ms.
    const delays = Array.from({ length: 4 }, () => pacedSlotDelay(paced, NOW, slot(30, 100)));
    expect(delays).toEqual([30, 140, 250, 360]);
  });

  it('starts the line at the pace\'s next opening once the line is behind it', () => {
    const paced = pace();
    pacedSlotDelay(paced, NOW, slot(30, 100));
    // A Retry-After holds the endpoint for 5 s: nobody comes back before then.
    expect(pacedSlotDelay(paced, NOW + 10, slot(5_000, 100))).toBe(5_000);
    expect(pacedSlotDelay(paced, NOW + 10, slot(5_000, 100))).toBe(5_110);
  });

  it('spaces the line of a backed-off pace by the pace expected at each slot, as it climbs back to its ceiling', () => {
    const paced = pace();
    // 5 calls a second now, climbing by 25 a second per second up to 100 (a 503's pace recovering).
    const delays = Array.from({ length: 300 }, () => pacedSlotDelay(paced, NOW, slot(0, 200, 25, 100)));
    const gaps = delays.slice(1).map((delay, index) => delay - delays[index]);
    expect(gaps[0]).toBe(219);
    // Each gap no longer than the one before (give or take the rounding to whole ms), down to the ceiling's 11 ms.
    for (let index = 1; index < gaps.length; index += 1) expect(gaps[index]).toBeLessThanOrEqual(gaps[index - 1] + 1);
    expect(gaps[gaps.length - 1]).toBe(11);
    // 300 jobs within 7 s, where the pace of the moment (5 a second) would have taken 66 s.
    expect(delays[delays.length - 1]).toBeLessThan(7_000);
  });

  it('never parks a job longer than the maximum', () => {
    const paced = pace();
    const delays = Array.from({ length: 10 }, () => pacedSlotDelay(paced, NOW, slot(1, 5_000)));
    expect(Math.max(...delays)).toBe(MAX_BUSY_DELAY_MS);
  });

  it('keeps its line apart from the line of jobs sent back for a full endpoint', () => {
    const both = pace();
    pacedSlotDelay(both, NOW, slot(1_000, 100));
    expect(pacedDelay(both, NOW, 10, undefined, () => 0.5)).toBe(MIN_BUSY_DELAY_MS);
  });
});
