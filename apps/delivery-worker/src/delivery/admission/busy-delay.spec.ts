import { MAX_BUSY_DELAY_MS, MIN_BUSY_DELAY_MS, type Pace, pacedDelay, pacedPlaceDelay } from './busy-delay';

const NOW = 1_000_000;
const middle = () => 0.5;

describe('pacedDelay', () => {
  it('sends the first job back for the minimum delay', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0 };
    expect(pacedDelay(pace, NOW, 10, undefined, middle)).toBe(MIN_BUSY_DELAY_MS);
    expect(pace.nextAt).toBe(NOW + MIN_BUSY_DELAY_MS);
  });

  it('lines later jobs up behind it, one call-time apart', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0 };
    const delays = Array.from({ length: 5 }, () => pacedDelay(pace, NOW, 10, undefined, middle));
    // 100 ms per call over 10 leases: a lease frees every 10 ms.
    expect(delays).toEqual([50, 60, 70, 80, 90]);
  });

  it('starts over once the line has drained', () => {
    const pace: Pace = { averageMs: 100, nextAt: NOW + 500 };
    expect(pacedDelay(pace, NOW + 10_000, 10, undefined, middle)).toBe(MIN_BUSY_DELAY_MS);
  });

  it('never parks a job longer than the maximum, and spreads by ±10 %', () => {
    const pace: Pace = { averageMs: 10_000, nextAt: NOW + 10 * MAX_BUSY_DELAY_MS };
    expect(pacedDelay(pace, NOW, 1, undefined, middle)).toBe(MAX_BUSY_DELAY_MS);
    const low = pacedDelay({ averageMs: 100, nextAt: 0 }, NOW, 10, undefined, () => 0);
    const high = pacedDelay({ averageMs: 100, nextAt: 0 }, NOW, 10, undefined, () => 0.999999);
    expect(low).toBe(Math.round(MIN_BUSY_DELAY_MS * 0.9));
    expect(high).toBe(Math.round(MIN_BUSY_DELAY_MS * 1.1));
  });

  it('spaces the line by the call time it is given instead of the average', () => {
    const pace: Pace = { averageMs: 5, nextAt: 0 };
    // Ten calls have run for 4 s: a lease frees no sooner than one of them ends (the first goes back for the minimum).
    const delays = Array.from({ length: 3 }, () => pacedDelay(pace, NOW, 10, 4_000, middle));
    expect(delays).toEqual([50, 450, 850]);
  });
});

describe('pacedPlaceDelay', () => {
  it('sends a job held by the pace to its own place, and no further than the maximum', () => {
    expect(pacedPlaceDelay({ at: NOW + 140.4 }, NOW)).toBe(140);
    expect(pacedPlaceDelay({ at: NOW - 5 }, NOW)).toBe(1);
    expect(pacedPlaceDelay({ at: NOW + 10 * MAX_BUSY_DELAY_MS }, NOW)).toBe(MAX_BUSY_DELAY_MS);
  });
});
