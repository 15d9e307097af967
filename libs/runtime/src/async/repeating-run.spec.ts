import type { Logger } from '@nestjs/common';
import { RepeatingRun } from './repeating-run';

describe('RepeatingRun', () => {
  let warnings: string[];
  const logger = { warn: (message: string) => void warnings.push(message) } as unknown as Logger;

  beforeEach(() => {
    warnings = [];
    jest.useFakeTimers();
  });
  afterEach(() => jest.useRealTimers());

  it('runs now, then the interval after each run ended, and logs a failed run without ending the loop', async () => {
    let runs = 0;
    const loop = new RepeatingRun(() => (++runs === 1 ? Promise.reject(new Error('boom')) : Promise.resolve()), { intervalMs: 1000, what: 'working', logger });
    loop.start();
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(999);
    expect(runs).toBe(1);
    expect(warnings).toEqual(['working failed: boom']);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(2);
    loop.start();
    expect(runs).toBe(2);
    await loop.stop();
  });

  it('waits for the first delay when given one', async () => {
    let runs = 0;
    const loop = new RepeatingRun(() => Promise.resolve(++runs), { intervalMs: 1000, what: 'working', logger });
    loop.start(5000);
    await jest.advanceTimersByTimeAsync(4999);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await loop.stop();
  });

  it('stops: no further run starts, and stop resolves once the run in progress ended', async () => {
    let finish: () => void = () => undefined;
    let runs = 0;
    const loop = new RepeatingRun(
      () => {
        runs += 1;
        return new Promise<void>((resolve) => (finish = resolve));
      },
      { intervalMs: 1000, what: 'working', logger },
    );
    loop.start();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    expect(loop.isStopped).toBe(true);
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(1);
    loop.start();
    expect(runs).toBe(1);
  });
});
