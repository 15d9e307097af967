import { type HeldLease, LocalLeases } from './local-leases';

const NOW = 1_000_000;
const OUTLIVE = NOW + 11_000;

function lease(id: string, reusableUntil = NOW + 1_000, expiresAt = NOW + 15_000): HeldLease {
  return { id, expiresAt, reusableUntil, busySince: NOW };
}

describe('LocalLeases', () => {
  it('hands a lease whose call succeeded straight to the longest-waiting job, which keeps it in use', async () => {
    const pool = new LocalLeases();
    const held = lease('a');
    pool.add(held, NOW);
    const first = pool.wait(1_000);
    const second = pool.wait(1_000);
    expect(pool.reuse(held, NOW + 5, OUTLIVE)).toBe('handed');
    await expect(first).resolves.toEqual({ kind: 'lease', lease: held });
    expect(held.busySince).toBe(NOW + 5);
    expect(pool.inUse).toBe(1);
    expect(pool.waiting).toBe(1);
    pool.freed(held);
    await expect(second).resolves.toEqual({ kind: 'ask' });
    expect(pool.empty).toBe(true);
  });

  it('asks the newest waiting job, the one with the most wait left, to try Redis itself', async () => {
    const pool = new LocalLeases();
    const [oldest, newest] = [pool.wait(1_000), pool.wait(1_000)];
    pool.askNewest();
    await expect(newest).resolves.toEqual({ kind: 'ask' });
    expect(pool.waiting).toBe(1);
    pool.askNewest();
    await expect(oldest).resolves.toEqual({ kind: 'ask' });
    expect(pool.empty).toBe(true);
  });

  it('tells every waiting job to look again at once (the breaker opened: no lease is coming)', async () => {
    const pool = new LocalLeases();
    const waiting = [pool.wait(60_000), pool.wait(60_000), pool.wait(60_000)];
    pool.askAll();
    await expect(Promise.all(waiting)).resolves.toEqual([{ kind: 'ask' }, { kind: 'ask' }, { kind: 'ask' }]);
    expect(pool.empty).toBe(true);
  });

  it('keeps a reusable lease idle for the next call, and retires it once idle too long', () => {
    const pool = new LocalLeases();
    const held = lease('a');
    pool.add(held, NOW);
    expect(pool.reuse(held, NOW + 5, OUTLIVE)).toBe('idle');
    expect({ inUse: pool.inUse, idle: pool.idleCount }).toEqual({ inUse: 0, idle: 1 });
    expect(pool.takeIdle(NOW + 10, OUTLIVE)).toEqual({ lease: held, retired: [] });
    expect(pool.inUse).toBe(1);
    pool.reuse(held, NOW + 20, OUTLIVE);
    expect(pool.sweep(NOW + 60, NOW + 10, OUTLIVE)).toEqual([]);
    expect(pool.sweep(NOW + 80, NOW + 30, OUTLIVE)).toEqual([held]);
    expect(pool.empty).toBe(true);
  });

  it('never reuses a lease past its reuse window or one that could expire under the next call', () => {
    const pool = new LocalLeases();
    const late = lease('late', NOW + 100);
    const short = lease('short', NOW + 1_000, NOW + 5_000);
    pool.add(late, NOW);
    pool.add(short, NOW);
    expect(pool.reuse(late, NOW + 200, OUTLIVE)).toBeNull();
    expect(pool.reuse(short, NOW + 10, OUTLIVE)).toBeNull();
    expect(pool.inUse).toBe(2);
  });

  it('after a failure no lease of the endpoint serves again without Redis: idle ones retire, busy ones lose reuse', () => {
    const pool = new LocalLeases();
    const busy = lease('busy');
    const idle = lease('idle');
    pool.add(busy, NOW);
    pool.add(idle, NOW);
    pool.reuse(idle, NOW + 1, OUTLIVE);
    expect(pool.stopReuse()).toEqual([idle]);
    expect(pool.reuse(busy, NOW + 2, OUTLIVE)).toBeNull();
    expect(pool.takeIdle(NOW + 3, OUTLIVE).lease).toBeNull();
  });

  it('a waiting job gives up after its time, and at shutdown every waiting job is told to stop', async () => {
    jest.useFakeTimers();
    try {
      const pool = new LocalLeases();
      pool.add(lease('a'), NOW);
      const timedOut = pool.wait(100);
      jest.advanceTimersByTime(100);
      await expect(timedOut).resolves.toEqual({ kind: 'timeout' });
      expect(pool.waiting).toBe(0);
      const stopped = pool.wait(1_000);
      expect(pool.stop()).toEqual([]);
      await expect(stopped).resolves.toEqual({ kind: 'stopping' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('knows when the longest-running call began', () => {
    const pool = new LocalLeases();
    expect(pool.oldestCallSince()).toBe(Infinity);
    pool.add(lease('a'), NOW + 50);
    pool.add(lease('b'), NOW + 10);
    expect(pool.oldestCallSince()).toBe(NOW + 10);
  });

  it('holds to the share Redis gave it while other workers want the endpoint, for as long as it was told', () => {
    const pool = new LocalLeases();
    expect(pool.slots(10, NOW)).toBe(10);
    pool.learnShare(3, NOW, 2_000);
    expect(pool.slots(10, NOW + 1_999)).toBe(3);
    expect(pool.slots(2, NOW)).toBe(2);
    expect(pool.slots(10, NOW + 2_000)).toBe(10);
    pool.learnShare(3, NOW, 2_000);
    pool.learnShare(null, NOW + 10, 2_000);
    expect(pool.slots(10, NOW + 10)).toBe(10);
  });
});
