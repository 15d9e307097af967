import { type HeldLease, LocalLeases } from './local-leases';

const NOW = 1_000_000;
const OUTLIVE = NOW + 11_000;

function lease(id: string, reusableUntil = NOW + 1_000, expiresAt = NOW + 15_000): HeldLease {
  return { id, expiresAt, reusableUntil, busySince: NOW };
}

describe('LocalLeases', () => {
  it('hands a lease whose call succeeded straight to the longest-waiting job, which keeps it in use', async () => {
    const local = new LocalLeases();
    const held = lease('a');
    local.add(held, NOW);
    const first = local.wait(1_000);
    const second = local.wait(1_000);
    expect(local.reuse(held, NOW + 5, OUTLIVE)).toBe('handed');
    await expect(first).resolves.toEqual({ kind: 'lease', lease: held });
    expect(held.busySince).toBe(NOW + 5);
    expect(local.inUse).toBe(1);
    expect(local.waiting).toBe(1);
    local.freed(held);
    await expect(second).resolves.toEqual({ kind: 'ask' });
    expect(local.empty).toBe(true);
  });

  it('asks the newest waiting job, the one with the most wait left, to try Redis itself', async () => {
    const local = new LocalLeases();
    const [oldest, newest] = [local.wait(1_000), local.wait(1_000)];
    local.askNewest();
    await expect(newest).resolves.toEqual({ kind: 'ask' });
    expect(local.waiting).toBe(1);
    local.askNewest();
    await expect(oldest).resolves.toEqual({ kind: 'ask' });
    expect(local.empty).toBe(true);
  });

  it('tells every waiting job to look again at once (the breaker opened: no lease is coming)', async () => {
    const local = new LocalLeases();
    const waiting = [local.wait(60_000), local.wait(60_000), local.wait(60_000)];
    local.askAll();
    await expect(Promise.all(waiting)).resolves.toEqual([{ kind: 'ask' }, { kind: 'ask' }, { kind: 'ask' }]);
    expect(local.empty).toBe(true);
  });

  it('keeps a reusable lease idle for the next call, and retires it once idle too long', () => {
    const local = new LocalLeases();
    const held = lease('a');
    local.add(held, NOW);
    expect(local.reuse(held, NOW + 5, OUTLIVE)).toBe('idle');
    expect({ inUse: local.inUse, idle: local.idleCount }).toEqual({ inUse: 0, idle: 1 });
    expect(local.takeIdle(NOW + 10, OUTLIVE)).toEqual({ lease: held, retired: [] });
    expect(local.inUse).toBe(1);
    local.reuse(held, NOW + 20, OUTLIVE);
    expect(local.sweep(NOW + 60, NOW + 10, OUTLIVE)).toEqual([]);
    expect(local.sweep(NOW + 80, NOW + 30, OUTLIVE)).toEqual([held]);
    expect(local.empty).toBe(true);
  });

  it('never reuses a lease past its reuse window or one that could expire under the next call', () => {
    const local = new LocalLeases();
    const late = lease('late', NOW + 100);
    const short = lease('short', NOW + 1_000, NOW + 5_000);
    local.add(late, NOW);
    local.add(short, NOW);
    expect(local.reuse(late, NOW + 200, OUTLIVE)).toBeNull();
    expect(local.reuse(short, NOW + 10, OUTLIVE)).toBeNull();
    expect(local.inUse).toBe(2);
  });

  it('after a failure no lease of the endpoint serves again without Redis: idle ones retire, busy ones lose reuse', () => {
    const local = new LocalLeases();
    const busy = lease('busy');
    const idle = lease('idle');
    local.add(busy, NOW);
    local.add(idle, NOW);
    local.reuse(idle, NOW + 1, OUTLIVE);
    expect(local.stopReuse()).toEqual([idle]);
    expect(local.reuse(busy, NOW + 2, OUTLIVE)).toBeNull();
    expect(local.takeIdle(NOW + 3, OUTLIVE).lease).toBeNull();
  });

  it('a waiting job gives up after its time, and at shutdown every waiting job is told to stop', async () => {
    jest.useFakeTimers();
    try {
      const local = new LocalLeases();
      local.add(lease('a'), NOW);
      const timedOut = local.wait(100);
      jest.advanceTimersByTime(100);
      await expect(timedOut).resolves.toEqual({ kind: 'timeout' });
      expect(local.waiting).toBe(0);
      const stopped = local.wait(1_000);
      expect(local.stop()).toEqual([]);
      await expect(stopped).resolves.toEqual({ kind: 'stopping' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('knows when the longest-running call began', () => {
    const local = new LocalLeases();
    expect(local.oldestCallSince()).toBe(Infinity);
    local.add(lease('a'), NOW + 50);
    local.add(lease('b'), NOW + 10);
    expect(local.oldestCallSince()).toBe(NOW + 10);
  });

  it('holds to the share Redis gave it while other workers want the endpoint, for as long as it was told', () => {
    const local = new LocalLeases();
    expect(local.allowed(10, NOW)).toBe(10);
    local.learnShare(3, NOW, 2_000);
    expect(local.allowed(10, NOW + 1_999)).toBe(3);
    expect(local.allowed(2, NOW)).toBe(2);
    expect(local.allowed(10, NOW + 2_000)).toBe(10);
    local.learnShare(3, NOW, 2_000);
    local.learnShare(null, NOW + 10, 2_000);
    expect(local.allowed(10, NOW + 10)).toBe(10);
  });
});
