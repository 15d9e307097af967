import { FIFO_RANKS, priorityOfRank } from './account-backlog';
import { deliveryJob, MAX_JOB_PRIORITY } from './delivery-queue';

describe('fair turns by rank in the account backlog', () => {
  it('keeps an account’s first jobs in the FIFO list and ranks the rest by their place in its backlog', () => {
    expect(priorityOfRank(1)).toBe(0);
    expect(priorityOfRank(FIFO_RANKS)).toBe(0);
    expect(priorityOfRank(FIFO_RANKS + 1)).toBe(FIFO_RANKS + 1);
    expect(priorityOfRank(20_000)).toBe(20_000);
    expect(priorityOfRank(MAX_JOB_PRIORITY + 10)).toBe(MAX_JOB_PRIORITY);
  });

  it('sets a BullMQ priority only on ranked jobs', () => {
    const step = { eventSeq: '7', accountId: 3, series: 0, attempt: 0 };
    expect(deliveryJob(step).opts.priority).toBeUndefined();
    expect(deliveryJob(step, 0, 0).opts.priority).toBeUndefined();
    expect(deliveryJob(step, 1000, 75).opts).toMatchObject({ priority: 75, delay: 1000, jobId: 'e7-s0-a0' });
  });
});
