import { Fakes, pendingEvent } from './delivery.service.fakes';

/** The re-read right before a call (CONTRACT §12): a job loaded before its event was erased makes no call. */
describe('DeliveryService and an erasure', () => {
  it('makes no call for an event erased after its load, ends it failed "erased" and frees its slot', async () => {
    const fakes = new Fakes();
    fakes.erased.add('42');
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('failed');
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(1);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', lastError: 'erased', nextAttemptAt: null, attempted: 0 });
    expect(fakes.released).toHaveLength(1);
    expect(fakes.released[0].signal).toBe('neutral');
  });

  it('makes no call for an event its load found erased (a manual redelivery of it)', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ erased: true, series: 1 });
    await expect(fakes.service().deliver(fakes.job(0, 1), 'token')).resolves.toBe('failed');
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', lastError: 'erased' });
  });

  it('calls as usual when the event was not erased', async () => {
    const fakes = new Fakes();
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('delivered');
    expect(fakes.requests).toHaveLength(1);
  });
});
