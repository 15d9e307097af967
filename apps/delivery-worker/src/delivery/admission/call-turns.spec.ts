import { WorkerStoppingError } from '../worker-stopping-error';
import { CallTurns } from './call-turns';

describe('CallTurns', () => {
  it('lets `limit` calls run at once and passes a turn straight to the longest-waiting job', async () => {
    const turns = new CallTurns(2);
    await turns.take();
    await turns.take();
    const order: string[] = [];
    const third = turns.take().then(() => order.push('third'));
    const fourth = turns.take().then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    turns.give();
    await third;
    expect(order).toEqual(['third']);
    expect(turns.inUse).toBe(2);
    turns.give();
    await fourth;
    turns.give();
    turns.give();
    expect(turns.inUse).toBe(0);
  });

  it('once stopping, no job gets a turn, waiting ones included', async () => {
    const turns = new CallTurns(1);
    await turns.take();
    const waiting = turns.take();
    turns.stop();
    turns.give();
    await expect(waiting).rejects.toBeInstanceOf(WorkerStoppingError);
    await expect(turns.take()).rejects.toBeInstanceOf(WorkerStoppingError);
    expect(turns.inUse).toBe(0);
  });
});
