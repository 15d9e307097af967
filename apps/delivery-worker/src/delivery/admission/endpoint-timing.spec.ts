import { DEFAULT_CALL_MS } from './busy-delay';
import { EndpointTiming, STUCK_CALL_MS } from './endpoint-timing';

describe('EndpointTiming', () => {
  it("expects an endpoint it has not timed to take the process's average call", () => {
    const timing = new EndpointTiming(10);
    expect(timing.expectedCallMs('http://new.example|1|a')).toBe(DEFAULT_CALL_MS);
    for (let i = 0; i < 50; i += 1) timing.noteCall('http://timed.example|1|a', 20);
    expect(timing.expectedCallMs('http://timed.example|1|a')).toBeCloseTo(20, 0);
    expect(timing.expectedCallMs('http://new.example|1|b')).toBeCloseTo(20, 0);
  });

  it('moves the average a fifth of the way to each new call', () => {
    const timing = new EndpointTiming(10);
    const key = 'http://slow.example|1|a';
    timing.noteCall(key, 100);
    timing.noteCall(key, 600);
    // 100 (the prior) → 100 → 0.8 × 100 + 0.2 × 600 = 200
    expect(timing.expectedCallMs(key)).toBe(200);
  });

  it('takes a call as stuck past three expected calls, never before STUCK_CALL_MS', () => {
    const timing = new EndpointTiming(10);
    const fast = 'http://fast.example|1|a';
    const slow = 'http://slow.example|1|a';
    for (let i = 0; i < 50; i += 1) {
      timing.noteCall(fast, 5);
      timing.noteCall(slow, 400);
    }
    expect(timing.stuckAfterMs(fast)).toBe(STUCK_CALL_MS);
    expect(timing.stuckAfterMs(slow)).toBeGreaterThan(1_000);
  });

  it('polls about once a call, within 5 and 50 ms', () => {
    const timing = new EndpointTiming(10);
    const [fast, mid, slow] = ['http://a.example|1|a', 'http://b.example|1|a', 'http://c.example|1|a'];
    for (let i = 0; i < 60; i += 1) {
      timing.noteCall(fast, 1);
      timing.noteCall(mid, 20);
      timing.noteCall(slow, 400);
    }
    expect(timing.pollMs(fast)).toBe(5);
    expect(timing.pollMs(mid)).toBe(20);
    expect(timing.pollMs(slow)).toBe(50);
  });

  it('spaces the jobs it sends back by a stuck call, not by the average of the calls that ended', () => {
    const timing = new EndpointTiming(10);
    const key = 'http://hanging.example|1|a';
    for (let i = 0; i < 50; i += 1) timing.noteCall(key, 5);
    const line = (oldestCallMs: number) => Array.from({ length: 3 }, () => timing.busyDelayMs(key, null, oldestCallMs));
    // Ten calls of 5 ms free a lease every half millisecond: the line returns at the minimum delay.
    expect(Math.max(...line(STUCK_CALL_MS))).toBeLessThan(60);
    // A call running 4 s: a lease frees no sooner than one ends, so the line is spaced 400 ms apart for
    // ten leases (about 450, 850 and 1,250 ms, each ±10 %).
    const stuck = line(4_000);
    expect(Math.min(...stuck)).toBeGreaterThan(300);
    expect(stuck[2]).toBeGreaterThan(1_000);
  });
});
