import type { deliverySteps } from '@app/persistence';
import type { DeliveryQueues } from '@app/runtime';
import type { EndpointDisabling } from '../admission';
import type { DestinationSettings } from '../destinations/destination-settings.cache';
import { pendingDelivery } from '../loading/pending-delivery.fakes';
import { OutcomeRecorder } from './outcome-recorder.service';
import type { OutcomeStore } from './outcome-store';
import { judgeAttempt } from './retry-policy';

const STARTED = new Date('2025-01-01T12:00:00Z');

const delivery = pendingDelivery({ expiresAt: null, action: 'Customer_create', open: false, subject: null });

const destination = {
  accountId: 7,
  id: 'primary',
  failingSince: STARTED.getTime() - 60_000,
  retry: { scheduleMs: [1_000], stopOn: new Set<number>(), disableOn: new Set<number>() },
} as unknown as DestinationSettings;

const attempt: deliverySteps.AttemptToRecord = {
  attempt: 1,
  startedAt: STARTED,
  durationMs: 12,
  url: 'https://receiver.example/hook',
  requestHeaders: {},
  encoding: 'json',
  responseStatus: 200,
  responseHeaders: {},
  responseBody: '',
  error: null,
};

describe('OutcomeRecorder.recordCall', () => {
  /**
   * A success after failures stops the failure clock: a statement and a notice to the other workers. The
   * call's record must not wait for them, since until it commits a crash makes the call a duplicate.
   */
  it('records the call while the failure clock is still being written, and waits for both', async () => {
    const recorded: deliverySteps.StepOutcome[] = [];
    let clockWritten = (): void => undefined;
    const noted: Array<{ success: boolean; at: Date }> = [];
    const store = { record: (step: deliverySteps.StepOutcome) => (recorded.push(step), Promise.resolve(true)) } as unknown as OutcomeStore;
    const disabling = {
      noteOutcome: (_destination: DestinationSettings, success: boolean, at: Date) => {
        noted.push({ success, at });
        return new Promise<void>((resolve) => (clockWritten = resolve));
      },
      disableNow: () => Promise.resolve(),
    } as unknown as EndpointDisabling;
    const recorder = new OutcomeRecorder(store, {} as DeliveryQueues, disabling);

    let settled: string | undefined;
    const result = recorder.recordCall(delivery, destination, attempt, judgeAttempt({ kind: 'response', status: 200, headers: {} }, Date.now()), { countsForHealth: true }).then((status) => (settled = status));
    await new Promise((resolve) => setImmediate(resolve));

    expect(noted).toEqual([{ success: true, at: STARTED }]);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ status: 'delivered', attempt: { attempt: 1, responseStatus: 200 } });
    expect(settled).toBeUndefined();
    clockWritten();
    expect(await result).toBe('delivered');
  });
});
