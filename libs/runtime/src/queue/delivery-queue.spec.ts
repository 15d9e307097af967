import { deliveryJobId, firstDeliveryStep, pendingRowStep, restartedSeriesStep, retryStep } from './delivery-queue';

describe('delivery job steps', () => {
  it('starts a new event at series 0, attempt 0', () => {
    expect(firstDeliveryStep('42', 7)).toEqual({ eventSeq: '42', accountId: 7, series: 0, attempt: 0 });
  });

  it('starts a restarted series at its first attempt, with an id the old series never used', () => {
    const step = restartedSeriesStep({ seq: '42', account_id: 7, series: 3 });
    expect(step).toEqual({ eventSeq: '42', accountId: 7, series: 3, attempt: 0 });
    expect(deliveryJobId(step)).toBe('e42-s3-a0');
  });

  it('re-adds a pending row at the step the row says, so an existing job is not duplicated', () => {
    const step = pendingRowStep({ seq: '42', account_id: 7, series: 1, series_attempts: 4 });
    expect(deliveryJobId(step)).toBe('e42-s1-a4');
    expect(step.accountId).toBe(7);
  });

  it('retries one attempt further in the same series, without the trace of the step before', () => {
    expect(retryStep({ eventSeq: '42', accountId: 7, series: 1, attempt: 4 })).toEqual({ eventSeq: '42', accountId: 7, series: 1, attempt: 5 });
    const traced = { ...firstDeliveryStep('42', 7), traceparent: '00-abc-def-01' };
    expect(retryStep(traced)).not.toHaveProperty('traceparent');
  });
});
