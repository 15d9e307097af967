import { ERASURE_NOTICE_MS, ERASURE_STAMP_KEEP_MS, ERASURE_TRUST_MS } from '@app/runtime';
import { ErasureStampView } from './erasure-stamp-view';

/** A stamp reader whose answers the test gives, counting the readings, on a clock the test moves. */
function harness(answers: Array<boolean | Error>) {
  const clock = { now: 100_000 };
  let readings = 0;
  const view = new ErasureStampView(() => {
    readings += 1;
    const answer = answers.shift() ?? false;
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }, () => clock.now);
  return { view, clock, readings: () => readings };
}

describe('ErasureStampView (the erasure stamp, seen by one worker)', () => {
  it('trusts a stampless reading for less than the notice an erasure gives, and shares it between calls', async () => {
    expect(ERASURE_TRUST_MS).toBeLessThan(ERASURE_NOTICE_MS);
    const { view, clock, readings } = harness([false]);
    await expect(Promise.all([view.quietSince(clock.now), view.quietSince(clock.now)])).resolves.toEqual([true, true]);
    clock.now += ERASURE_TRUST_MS / 2 - 1;
    await expect(view.quietSince(clock.now - 5)).resolves.toBe(true);
    expect(readings()).toBe(1);
  });

  it('asks for a re-read while the stamp exists', async () => {
    const { view, clock } = harness([true]);
    await expect(view.quietSince(clock.now)).resolves.toBe(false);
  });

  it('asks for a re-read of an event loaded longer than the stamp is kept before the reading', async () => {
    const { view, clock } = harness([false, false]);
    await expect(view.quietSince(clock.now - ERASURE_STAMP_KEEP_MS - 1)).resolves.toBe(false);
    await expect(view.quietSince(clock.now - ERASURE_STAMP_KEEP_MS + 1)).resolves.toBe(true);
  });

  it('reads again once the trust is over, and sees an erasure that started meanwhile', async () => {
    const { view, clock, readings } = harness([false, true]);
    await expect(view.quietSince(clock.now)).resolves.toBe(true);
    clock.now += ERASURE_TRUST_MS;
    await expect(view.quietSince(clock.now)).resolves.toBe(false);
    expect(readings()).toBe(2);
  });

  it('reads again in the background halfway through the trust, so a busy worker seldom waits for Redis', async () => {
    const { view, clock, readings } = harness([false, true]);
    await view.quietSince(clock.now);
    clock.now += ERASURE_TRUST_MS / 2;
    // Answered from the reading in hand; the next one is under way.
    await expect(view.quietSince(clock.now)).resolves.toBe(true);
    expect(readings()).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(view.quietSince(clock.now)).resolves.toBe(false);
  });

  it('asks for a re-read when Redis fails to answer', async () => {
    const { view, clock } = harness([new Error('connection closed')]);
    await expect(view.quietSince(clock.now)).resolves.toBe(false);
  });

  it('asks for a re-read when the reading itself took longer than the trust', async () => {
    const clock = { now: 0 };
    const view = new ErasureStampView(() => {
      clock.now += ERASURE_TRUST_MS;
      return Promise.resolve(false);
    }, () => clock.now);
    await expect(view.quietSince(clock.now)).resolves.toBe(false);
  });
});
