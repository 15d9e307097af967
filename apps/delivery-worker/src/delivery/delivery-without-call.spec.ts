import { DelayedError } from 'bullmq';
import { accountSettings, Fakes, pendingEvent } from './delivery.service.fakes';

/**
 * The steps DeliveryService takes without a call: a full or paced endpoint, an ordered subject's hold and
 * release, an open breaker (and the manual redelivery that forces it), a disabled endpoint.
 */
/** The step moved its job to between `fromMs` and `toMs` from now (or from `before`), without a call or an attempt. */
async function expectPostponedWithoutCall(fakes: Fakes, fromMs: number, toMs: number, before = Date.now()): Promise<void> {
  await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
  expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + fromMs);
  expect(fakes.delayedTo[0]).toBeLessThanOrEqual(Date.now() + toMs);
  expect(fakes.requests).toHaveLength(0);
  expect(fakes.recorded).toHaveLength(0);
}

describe('DeliveryService, without a call', () => {
  it('moves the job to later without an attempt when the endpoint has no free slot', async () => {
    const fakes = new Fakes();
    fakes.admission = { kind: 'busy', pace: null };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(fakes.delayedTo[0]).toBeGreaterThanOrEqual(before + 150);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(0);
  });

  it('waits for the endpoint pace without an attempt, until its own place in the pace', async () => {
    const fakes = new Fakes();
    // Counted from the same instant as the place: a millisecond between the two must not fail the bound.
    const before = Date.now();
    fakes.admission = { kind: 'busy', pace: { at: before + 2000 } };
    await expectPostponedWithoutCall(fakes, 2000, 2100, before);
  });

  it('holds an event behind an earlier pending event of its subject without an attempt; a manual redelivery goes at once', async () => {
    const held = new Fakes();
    held.settings = accountSettings({ ordering: 'subject' });
    held.heldMs = 700;
    const before = Date.now();
    await expect(held.service().deliver(held.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(held.delayedTo[0]).toBeGreaterThanOrEqual(before + 700);
    expect(held.requests).toHaveLength(0);
    expect(held.recorded).toHaveLength(0);

    const redelivered = new Fakes();
    redelivered.settings = accountSettings({ ordering: 'subject' });
    redelivered.heldMs = 700;
    redelivered.event = pendingEvent({ series: 1, seriesAttempts: 0, attempts: 3 });
    await expect(redelivered.service().deliver(redelivered.job(0, 1), 'token')).resolves.toBe('delivered');
    expect(redelivered.requests).toHaveLength(1);

    const unordered = new Fakes();
    unordered.heldMs = 700;
    await expect(unordered.service().deliver(unordered.job(), 'token')).resolves.toBe('delivered');
  });

  it('says it works on an ordered event from the moment its job is taken, before its load comes back, until its end', async () => {
    const fakes = new Fakes();
    fakes.settings = accountSettings({ ordering: 'subject' });
    let loaded: () => void = () => undefined;
    fakes.loadGate = new Promise<void>((resolve) => (loaded = resolve));
    const delivered = fakes.service().deliver(fakes.job(), 'token');
    await new Promise((resolve) => setImmediate(resolve));
    // Loads run in parallel batches: a later job of the subject whose load comes back first must find this one at work.
    expect(fakes.working).toEqual(['42']);
    expect(fakes.workedOver).toEqual([]);
    loaded();
    expect(await delivered).toBe('delivered');
    expect(fakes.working).toEqual(['42']);
    expect(fakes.workedOver).toEqual(['42']);
  });

  it('releases the next event of an ordered subject when an event ends, never while it only goes to retrying', async () => {
    const ends = async (setup: (fakes: Fakes) => void): Promise<string[]> => {
      const fakes = new Fakes();
      fakes.settings = accountSettings({ ordering: 'subject' });
      setup(fakes);
      await fakes.service().deliver(fakes.job(), 'token');
      return fakes.releasedAfter;
    };
    expect(await ends(() => undefined)).toEqual(['42']);
    expect(await ends((fakes) => (fakes.settings = accountSettings({ ordering: 'subject', permissions: {} })))).toEqual(['42']);
    expect(await ends((fakes) => (fakes.answer = { status: 500, headers: {}, body: '', truncated: false }))).toEqual([]);
    expect(await ends((fakes) => (fakes.applied = false))).toEqual([]);
    expect(await ends((fakes) => (fakes.settings = accountSettings()))).toEqual([]);
  });

  it('records an attempt due while the breaker is open as failed without a call, and keeps to the schedule', async () => {
    const fakes = new Fakes();
    const retryAt = new Date(Date.now() + 20_000);
    fakes.admission = { kind: 'open', waitMs: 20_000, retryAt, consecutiveFailures: 5, lastError: 'HTTP 503: server error', probing: false };
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('retrying');
    const circuit = `circuit open until ${retryAt.toISOString()} after 5 consecutive failures: HTTP 503: server error`;
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 1, durationMs: 0, requestHeaders: {}, requestBody: '', responseStatus: null, error: circuit },
      change: { status: 'retrying', attempted: 1 },
    });
    expect(fakes.recorded[0].change.lastError).toMatch(new RegExp(`^${circuit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(retryable\\); next attempt in \\d+ ms$`));
    // The next attempt follows RETRY_SCHEDULE (10s ±15 %), not the breaker's cooldown.
    expect(fakes.added[0].opts.delay).toBeGreaterThanOrEqual(8500);
    expect(fakes.added[0].opts.delay).toBeLessThanOrEqual(11_500);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.released).toHaveLength(0);
    expect(fakes.delayedTo).toHaveLength(0);
    // A skipped attempt counts as failed for the endpoint's disabling clock.
    expect(fakes.health).toEqual([{ success: false }]);
  });

  it('fails the event when its last attempt falls due while the breaker is open', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 2, seriesAttempts: 2, status: 'retrying' });
    fakes.admission = { kind: 'open', waitMs: 5000, retryAt: new Date(Date.now() + 5000), consecutiveFailures: 7, lastError: null, probing: false };
    await expect(fakes.service().deliver(fakes.job(2), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0].attempt).toMatchObject({ attempt: 3, error: expect.stringMatching(/^circuit open until \S+ after 7 consecutive failures$/) });
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', attempted: 1, nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/; retries exhausted after 3 attempts$/);
    expect(fakes.added).toHaveLength(0);
    expect(fakes.requests).toHaveLength(0);
  });

  it('waits for another worker\'s half-open probe without spending an attempt', async () => {
    const fakes = new Fakes();
    fakes.admission = { kind: 'open', waitMs: 2000, retryAt: new Date(Date.now() + 2000), consecutiveFailures: 5, lastError: null, probing: true };
    await expectPostponedWithoutCall(fakes, 1000, 2000);
  });

  it('forces the first call of a manual redelivery through the breaker, and only that one', async () => {
    const redelivered = new Fakes();
    redelivered.event = pendingEvent({ attempts: 4, series: 1, seriesAttempts: 0 });
    await expect(redelivered.service().deliver(redelivered.job(0, 1), 'token')).resolves.toBe('delivered');
    expect(redelivered.forced).toEqual([true]);
    expect(redelivered.recorded[0].attempt).toMatchObject({ series: 1, attempt: 5 });

    const retry = new Fakes();
    retry.event = pendingEvent({ attempts: 5, series: 1, seriesAttempts: 1, status: 'retrying' });
    await retry.service().deliver(retry.job(1, 1), 'token');
    const first = new Fakes();
    await first.service().deliver(first.job(), 'token');
    expect([...retry.forced, ...first.forced]).toEqual([false, false]);
  });

  it('ends an event failed at once, without a call, when its endpoint is disabled', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 8, series: 1, seriesAttempts: 0 });
    fakes.disabled = accountSettings({ disabledAt: new Date('2026-01-02T03:04:05.000Z'), disabledReason: 'every attempt since … failed' });
    await expect(fakes.service().deliver(fakes.job(0, 1), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0]).toMatchObject({ attempt: null, change: { status: 'failed', attempted: 0, nextAttemptAt: null } });
    expect(fakes.recorded[0].change.lastError).toBe(
      'endpoint disabled since 2026-01-02T03:04:05.000Z (every attempt since … failed); no call made. ' +
        'Enable it (POST /admin/v1/accounts/7/endpoint/enable, or set_url), then redeliver',
    );
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.forced).toHaveLength(0);
  });
});
