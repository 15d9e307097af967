import { deliveryJobId, DeliveryQueues, firstDeliveryStep, loadEnvironment, RedisKeys } from '@app/runtime';
import { FIFO_RANKS } from '../libs/runtime/src/queue/account-backlog';
import { deleteKeysUnder, useOwnRedisPrefix } from './support/worker-process';

const PREFIX = useOwnRedisPrefix('account-backlog');

/** Producers rank each new job in its account's backlog (fair turns) on real Redis and BullMQ. */
describe('DeliveryQueues, ranks in the account backlog', () => {
  let queues: DeliveryQueues;

  beforeAll(async () => {
    queues = DeliveryQueues.open(loadEnvironment({ ...process.env, DELIVERY_QUEUE_SHARDS: '1' }), 'producer');
    await queues.ready(5_000);
  });

  afterAll(async () => {
    await queues.close();
    await deleteKeysUnder(PREFIX);
  });

  const counts = () => queues.all()[0].getJobCounts('wait', 'prioritized');
  let nextSeq = 1;
  const steps = (accountId: number, count: number) => Array.from({ length: count }, () => firstDeliveryStep(String(nextSeq++), accountId));

  it('puts an account’s first jobs in the FIFO list and ranks the rest', async () => {
    await queues.addBulk(steps(1, FIFO_RANKS + 10));
    expect(await counts()).toEqual({ wait: FIFO_RANKS, prioritized: 10 });
    // Its backlog was seen large: the next job asks its rank instead of guessing.
    await queues.addBulk(steps(1, 1));
    expect(await counts()).toEqual({ wait: FIFO_RANKS, prioritized: 11 });
  });

  it('adds without asking the rank of an account it just saw small, for a bounded number of jobs, and still counts them', async () => {
    const keys = new RedisKeys(PREFIX);
    const before = await counts();
    await queues.addBulk(steps(2, 1));
    // Another producer floods the account meanwhile; this one saw it at rank 1 a moment ago.
    const redis = queues.all()[0].client;
    await (await redis).set(keys.accountBacklog(2), 1000);
    for (const step of steps(2, 30)) await queues.addBulk([step]);
    const after = await counts();
    // Rank 1 seen: the next job is guessed FIFO; the counter's answer to it (1,001) ends the guessing, and
    // the other 29 ask their rank (beyond 1,000: ranked).
    expect(after.wait - before.wait).toBe(2);
    expect(after.prioritized - before.prioritized).toBe(29);
    // Every job was counted, guessed or not.
    expect(Number(await (await redis).get(keys.accountBacklog(2)))).toBe(1000 + 30);
  });

  it('gives each job of a bulk add its own delay when asked to (the retries an outcome batch plans)', async () => {
    const [due, later] = steps(3, 2);
    const started = Date.now();
    await queues.addBulk([due, later], [0, 60_000]);
    const queue = queues.all()[0];
    const [dueJob, laterJob] = await Promise.all([queue.getJob(deliveryJobId(due)), queue.getJob(deliveryJobId(later))]);
    expect(await dueJob?.getState()).toBe('waiting');
    expect(await laterJob?.getState()).toBe('delayed');
    expect(laterJob?.opts.delay).toBe(60_000);
    expect(laterJob?.timestamp).toBeGreaterThanOrEqual(started);
  });
});
