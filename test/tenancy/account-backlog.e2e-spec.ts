import { deliveryJobId, DeliveryQueues, firstDeliveryStep, loadEnvironment, RedisKeys } from '@app/runtime';
import { FIFO_RANKS } from '../../libs/runtime/src/queue/account-backlog';
import { waitForValue } from '@app/testing';
import { deleteKeysUnder, useOwnRedisPrefix } from '../support/worker-process';

const PREFIX = useOwnRedisPrefix('account-backlog');

/**
 * Producers rank each new job in its account's backlog (fair turns) on real Redis and BullMQ. Their
 * clock stands still, so an answer seen "a moment ago" stays a moment ago however slow the machine is.
 */
describe('DeliveryQueues, ranks in the account backlog', () => {
  const STILL = Date.now();
  const openQueues = async (role: 'producer' | 'consumer', countFlushMs?: number) => {
    const opened = DeliveryQueues.open(loadEnvironment({ ...process.env, DELIVERY_QUEUE_SHARDS: '1' }), role, { clock: () => STILL, countFlushMs });
    await opened.ready(5_000);
    return opened;
  };
  let queues: DeliveryQueues;
  /** Producers a test opened for itself, closed by the test (closing writes what they summed) or here if it failed first. */
  const ownProducers: DeliveryQueues[] = [];

  beforeAll(async () => {
    queues = await openQueues('producer');
  });

  afterAll(async () => {
    await Promise.all(ownProducers.map((producer) => producer.close()));
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

  const keys = new RedisKeys(PREFIX);
  const counter = async (accountId: number) => Number(await (await queues.all()[0].client).get(keys.accountBacklog(accountId)));

  it('adds without asking the rank of an account it just saw small, for a bounded number of jobs, and still counts them', async () => {
    // Its own producer, closed at the end: closing writes what it summed, so the count is final then.
    const producer = await openQueues('producer');
    ownProducers.push(producer);
    const before = await counts();
    await producer.addBulk(steps(2, 1));
    // Another producer floods the account meanwhile; this one saw it at rank 1 a moment ago.
    await (await queues.all()[0].client).set(keys.accountBacklog(2), 1000);
    for (const step of steps(2, 30)) await producer.addBulk([step]);
    await producer.close();
    const after = await counts();
    // Rank 1 seen: the next jobs are guessed FIFO until the guesses reach half the FIFO ranks, or until
    // the counter's next answer (its write of the guessed jobs, every 100 ms) says 1,000; the rest ask
    // their rank (beyond 1,000: ranked).
    const fifo = after.wait - before.wait;
    expect(fifo).toBeGreaterThanOrEqual(2);
    expect(fifo).toBeLessThanOrEqual(FIFO_RANKS / 2);
    expect(after.prioritized - before.prioritized).toBe(31 - fifo);
    // Every job was counted, guessed or not.
    expect(await counter(2)).toBe(1000 + 30);
  });

  it('learns of a flood started elsewhere from its next write of the counter, without adding again', async () => {
    await queues.addBulk(steps(4, 1));
    await (await queues.all()[0].client).set(keys.accountBacklog(4), 1000);
    const before = await counts();
    await queues.addBulk(steps(4, 1));
    // Guessed FIFO; the write of that guess answers 1,001, so the next job asks and is ranked. The write
    // is the producer's periodic one: seen in Redis, then its answer (on the same connection, read
    // first) is learnt once the callbacks already due have run.
    await waitForValue('the producer’s periodic write of its guessed job', () => counter(4), 1001);
    await new Promise((resolve) => setImmediate(resolve));
    await queues.addBulk(steps(4, 1));
    expect(await counts()).toEqual({ wait: before.wait + 1, prioritized: before.prioritized + 1 });
    expect(await counter(4)).toBe(1002);
  });

  it('counts a job whose end reached the counter before its add did (the two are written apart)', async () => {
    const ends = async () => {
      const worker = await openQueues('consumer');
      worker.settled(5);
      // Closing writes the worker's summed ends at once.
      return worker.close();
    };
    // A producer whose periodic write never comes first: the end is written before the add, always.
    const producer = await openQueues('producer', 3_600_000);
    ownProducers.push(producer);
    await producer.addBulk(steps(5, 1));
    await ends();
    expect(await counter(5)).toBe(0);
    // Guessed (rank 1 seen a moment ago): counted with this producer's next write, after the job's end.
    await producer.addBulk(steps(5, 1));
    await ends();
    expect(await counter(5)).toBe(-1);
    await producer.close();
    // A floor at zero would have kept the add and lost the end: 1 for an empty backlog, and one more each time.
    expect(await counter(5)).toBe(0);
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

  it('stores a job added alone (without a pipeline) as it stores the same job added with others', async () => {
    const [alone, inBulk, other] = steps(4, 3);
    await queues.addBulk([alone], 30_000);
    await queues.addBulk([inBulk, other], 30_000);
    const queue = queues.all()[0];
    const [aloneJob, bulkJob] = await Promise.all([queue.getJob(deliveryJobId(alone)), queue.getJob(deliveryJobId(inBulk))]);
    expect(aloneJob?.name).toBe(bulkJob?.name);
    expect(aloneJob?.data).toEqual({ ...alone });
    expect(bulkJob?.data).toEqual({ ...inBulk });
    expect(await aloneJob?.getState()).toBe('delayed');
    expect(await bulkJob?.getState()).toBe('delayed');
    const { jobId: aloneId, priority: alonePriority, ...aloneOptions } = aloneJob?.opts ?? {};
    const { jobId: bulkId, priority: bulkPriority, ...bulkOptions } = bulkJob?.opts ?? {};
    expect([aloneId, bulkId]).toEqual([deliveryJobId(alone), deliveryJobId(inBulk)]);
    // Each job its own rank in the account's backlog: the next job, the next rank.
    expect(bulkPriority).toBe((alonePriority ?? 0) + 1);
    expect(aloneOptions).toEqual(bulkOptions);
    expect(aloneOptions).toMatchObject({ delay: 30_000, removeOnComplete: true, removeOnFail: true });
  });

  it("re-adds only the jobs that are gone, so the reconciler's re-adds never inflate the account's count", async () => {
    const producer = await openQueues('producer');
    ownProducers.push(producer);
    const kept = steps(6, 5);
    await producer.addBulk(kept);
    // Five still queued, two whose jobs were lost: only those two are added (and counted).
    expect(await producer.addMissing([...kept, ...steps(6, 2)])).toBe(2);
    await producer.close();
    expect(await counter(6)).toBe(7);
  });

  it("never counts more of an account's jobs than its shard holds, whatever its drifted counter says", async () => {
    await (await queues.all()[0].client).set(keys.accountBacklog(7), '100000');
    const before = await queues.accountJobs(7);
    const inShard = await queues.all()[0].getJobCounts('wait', 'prioritized', 'delayed');
    expect(before).toBe((inShard.wait ?? 0) + (inShard.prioritized ?? 0) + (inShard.delayed ?? 0));
    expect(before).toBeLessThan(100_000);
  });
});
