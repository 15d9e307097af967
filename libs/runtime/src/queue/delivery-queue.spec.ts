import { deliveryJobId, destinationOfStep, firstDeliveryStep, retryStep, stepOfRow } from './delivery-queue';

describe('delivery job steps', () => {
  it('starts a new delivery at series 0, attempt 0, naming its destination unless it is the primary', () => {
    expect(firstDeliveryStep('42', 7)).toEqual({ eventSeq: '42', accountId: 7, series: 0, attempt: 0 });
    expect(firstDeliveryStep('42', 7, 'dst_a')).toEqual({ eventSeq: '42', accountId: 7, series: 0, attempt: 0, destinationId: 'dst_a' });
    expect(destinationOfStep(firstDeliveryStep('42', 7))).toBe('primary');
  });

  it('re-adds a pending row at the step the row says, so an existing job is not duplicated', () => {
    const primary = stepOfRow({ event_seq: '42', account_id: 7, destination_id: 'primary', series: 1, series_attempts: 4 });
    expect(deliveryJobId(primary)).toBe('e42-s1-a4');
    const other = stepOfRow({ event_seq: '42', account_id: 7, destination_id: 'dst_a', series: 3, series_attempts: 0 });
    expect(deliveryJobId(other)).toBe('e42-ddst_a-s3-a0');
    expect(other.accountId).toBe(7);
  });

  it('retries one attempt further in the same series, without the trace or the probe mark of the step before', () => {
    expect(retryStep({ eventSeq: '42', accountId: 7, series: 1, attempt: 4 })).toEqual({ eventSeq: '42', accountId: 7, series: 1, attempt: 5 });
    const traced = { ...firstDeliveryStep('42', 7), traceparent: '00-abc-def-01', probe: true as const };
    expect(retryStep(traced)).not.toHaveProperty('traceparent');
    expect(retryStep(traced)).not.toHaveProperty('probe');
  });
});
