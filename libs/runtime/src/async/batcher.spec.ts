import { Batcher, oneByOneOnFailure, type Settled } from './batcher';
import { within } from './within';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * Resumes the test from a timer callback: an immediate set from there runs in this same loop turn, before
 * any timer set alongside it. Begun anywhere else (after an immediate), that order holds only on a machine
 * quick enough to start the next turn within the timer's delay.
 */
function inTimersPhase(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

describe('Batcher', () => {
  it('groups items that arrive while a batch runs, keeping at most maxInFlight batches', async () => {
    const calls: number[][] = [];
    const gates: { resolve: (value: void) => void }[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        calls.push(items);
        const gate = deferred<void>();
        gates.push(gate);
        await gate.promise;
        return items.map((item): Settled<number> => ({ ok: true, value: item * 2 }));
      },
      { maxBatch: 100, maxInFlight: 1, lingerMs: 0 },
    );
    await inTimersPhase();
    const first = batcher.submit(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const rest = [2, 3, 4].map((item) => batcher.submit(item));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toEqual([[1]]);
    gates[0].resolve();
    expect(await first).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toEqual([[1], [2, 3, 4]]);
    gates[1].resolve();
    expect(await Promise.all(rest)).toEqual([4, 6, 8]);
  });

  it('sends a lone item without waiting for a timer, while items submitted together share its batch', async () => {
    const order: string[] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        order.push(`batch ${items.join(',')}`);
        return Promise.resolve(items.map((item): Settled<number> => ({ ok: true, value: item })));
      },
      { maxBatch: 10, maxInFlight: 2, lingerMs: 0 },
    );
    await inTimersPhase();
    // A 0 ms timer armed before the submit fires before any timer the batcher could arm after it.
    const timerFired = new Promise<void>((resolve) => setTimeout(() => resolve(void order.push('timer')), 0));
    const lone = batcher.submit(1);
    const together = batcher.submit(2);
    await Promise.all([lone, together, timerFired]);
    expect(order).toEqual(['batch 1,2', 'timer']);
  });

  it('splits at maxBatch and settles each item on its own', async () => {
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        sizes.push(items.length);
        return Promise.resolve(items.map((item): Settled<number> => (item % 2 ? { ok: true, value: item } : { ok: false, error: new Error(`even ${item}`) })));
      },
      { maxBatch: 3, maxInFlight: 2, lingerMs: 5 },
    );
    const results = await Promise.allSettled([1, 2, 3, 4, 5, 6, 7].map((item) => batcher.submit(item)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(7);
  });

  it('rejects every item of a batch whose call throws', async () => {
    const batcher = new Batcher<number, number>(() => Promise.reject(new Error('database away')), { maxBatch: 10, maxInFlight: 1, lingerMs: 0 });
    await expect(Promise.all([batcher.submit(1), batcher.submit(2)])).rejects.toThrow('database away');
  });

  it('drains: sends what waits and resolves once nothing runs', async () => {
    const seen: number[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        seen.push(...items);
        return items.map((item): Settled<number> => ({ ok: true, value: item }));
      },
      { maxBatch: 2, maxInFlight: 1, lingerMs: 1000 },
    );
    const submitted = [1, 2, 3, 4, 5].map((item) => batcher.submit(item));
    await batcher.drain();
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(batcher.pending).toBe(0);
    await Promise.all(submitted);
  });

  it('sends a lone item after a batch at once, in a batch of its own', async () => {
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        calls.push(items);
        return Promise.resolve(items.map((item): Settled<number> => ({ ok: true, value: item })));
      },
      { maxBatch: 100, maxInFlight: 1, lingerMs: 0 },
    );
    for (const item of [1, 2, 3]) await batcher.submit(item);
    expect(calls).toEqual([[1], [2], [3]]);
  });
});

describe('Batcher afterBatch', () => {
  it('runs once per batch, after the call and outside its slot, before any caller is answered', async () => {
    const events: string[] = [];
    const afterGate = deferred<void>();
    const firstAfterWaiting = deferred<void>();
    const secondAfterDone = deferred<void>();
    const batcher = new Batcher<number, number>(
      (items) => {
        events.push(`call ${items.join(',')}`);
        return Promise.resolve(items.map((item): Settled<number> => ({ ok: true, value: item })));
      },
      {
        maxBatch: 10,
        maxInFlight: 1,
        lingerMs: 0,
        afterBatch: async (items, results) => {
          events.push(`after ${items.join(',')} ok=${results.filter((result) => result.ok).length}`);
          if (items[0] === 1) {
            firstAfterWaiting.resolve();
            await afterGate.promise;
          } else {
            secondAfterDone.resolve();
          }
        },
      },
    );
    let firstAnswered = false;
    const first = Promise.all([batcher.submit(1), batcher.submit(2)]).then((values) => {
      firstAnswered = true;
      return values;
    });
    // Steps follow the batcher's own signals, not the clock: a loaded machine reorders timers and immediates.
    await firstAfterWaiting.promise;
    // The first batch's afterBatch still waits, yet the slot is free: the next batch's call goes out.
    const second = batcher.submit(3);
    // A deadline, not an expectation: were the slot held through afterBatch, "call 3" would never come.
    await within(secondAfterDone.promise, 2_000, "the second batch's afterBatch");
    expect(events).toEqual(['call 1,2', 'after 1,2 ok=2', 'call 3', 'after 3 ok=1']);
    expect(firstAnswered).toBe(false);
    afterGate.resolve();
    expect(await first).toEqual([1, 2]);
    expect(await second).toBe(3);
  });
});

describe('oneByOneOnFailure', () => {
  const refuseSeven = (items: number[]): Promise<number[]> =>
    items.includes(7) ? Promise.reject(new Error('seven refused')) : Promise.resolve(items.map((item) => item * 10));

  it('answers a whole batch from one call when it succeeds', async () => {
    const calls: number[][] = [];
    const run = oneByOneOnFailure((items: number[]) => {
      calls.push(items);
      return refuseSeven(items);
    });
    expect(await run([1, 2])).toEqual([
      { ok: true, value: 10 },
      { ok: true, value: 20 },
    ]);
    expect(calls).toEqual([[1, 2]]);
  });

  it('splits a failed batch so only the culprit fails, saying so first', async () => {
    const splits: number[] = [];
    const run = oneByOneOnFailure(refuseSeven, { onSplit: (_error, size) => splits.push(size) });
    const results = await run([1, 7, 3]);
    expect(results.map((result) => (result.ok ? result.value : (result.error as Error).message))).toEqual([10, 'seven refused', 30]);
    expect(splits).toEqual([3]);
  });

  it('does not split a single item or an error the caller says splitting cannot help', async () => {
    await expect(oneByOneOnFailure(refuseSeven)([7])).rejects.toThrow('seven refused');
    const calls: number[][] = [];
    const run = oneByOneOnFailure(
      (items: number[]) => {
        calls.push(items);
        return Promise.reject(new Error('database away'));
      },
      { splitOn: (error) => (error as Error).message !== 'database away' },
    );
    await expect(run([1, 2])).rejects.toThrow('database away');
    expect(calls).toEqual([[1, 2]]);
  });
});
