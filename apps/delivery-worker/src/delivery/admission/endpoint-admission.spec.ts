import { MAX_BUSY_DELAY_MS, MIN_BUSY_DELAY_MS, type Pace, pacedDelay } from './endpoint-admission';

const NOW = 1_000_000;
const middle = () => 0.5;

describe('pacedDelay', () => {
  it('sends the first job back for the minimum delay', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0 };
    expect(pacedDelay(pace, NOW, 10, middle)).toBe(MIN_BUSY_DELAY_MS);
    expect(pace.nextAt).toBe(NOW + MIN_BUSY_DELAY_MS);
  });

  it('lines later jobs up behind it, one slot-time apart', () => {
    const pace: Pace = { averageMs: 100, nextAt: 0 };
    const delays = Array.from({ length: 5 }, () => pacedDelay(pace, NOW, 10, middle));
    // 100 ms per call over 10 slots: a slot frees every 10 ms.
    expect(delays).toEqual([50, 60, 70, 80, 90]);
  });

  it('starts over once the line has drained', () => {
    const pace: Pace = { averageMs: 100, nextAt: NOW + 500 };
    expect(pacedDelay(pace, NOW + 10_000, 10, middle)).toBe(MIN_BUSY_DELAY_MS);
  });

  it('never parks a job longer than the maximum, and spreads by ±10 %', () => {
    const pace: Pace = { averageMs: 10_000, nextAt: NOW + 10 * MAX_BUSY_DELAY_MS };
    expect(pacedDelay(pace, NOW, 1, middle)).toBe(MAX_BUSY_DELAY_MS);
    const low = pacedDelay({ averageMs: 100, nextAt: 0 }, NOW, 10, () => 0);
    const high = pacedDelay({ averageMs: 100, nextAt: 0 }, NOW, 10, () => 0.999999);
    expect(low).toBe(Math.round(MIN_BUSY_DELAY_MS * 0.9));
    expect(high).toBe(Math.round(MIN_BUSY_DELAY_MS * 1.1));
  });
});
