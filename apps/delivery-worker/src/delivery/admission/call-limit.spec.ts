import { WorkerStoppingError } from '../worker-stopping-error';
import { CallLimit } from './call-limit';

describe('CallLimit', () => {
  it('lets `limit` calls run at once and passes a call straight to the longest-waiting job', async () => {
    const calls = new CallLimit(2);
    await calls.take();
    await calls.take();
    const order: string[] = [];
    const third = calls.take().then(() => order.push('third'));
    const fourth = calls.take().then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    calls.give();
    await third;
    expect(order).toEqual(['third']);
    expect(calls.inUse).toBe(2);
    calls.give();
    await fourth;
    calls.give();
    calls.give();
    expect(calls.inUse).toBe(0);
  });

  it('once stopping, no job gets a call, waiting ones included', async () => {
    const calls = new CallLimit(1);
    await calls.take();
    const waiting = calls.take();
    calls.stop();
    calls.give();
    await expect(waiting).rejects.toBeInstanceOf(WorkerStoppingError);
    await expect(calls.take()).rejects.toBeInstanceOf(WorkerStoppingError);
    expect(calls.inUse).toBe(0);
  });
});
