import { performance } from 'node:perf_hooks';
import { type Job, Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { priorityOfRank } from '@app/runtime/queue/account-backlog';
import { deliveryJob } from '@app/runtime/queue/delivery-queue';
import { measureLanesRing } from './lanes-ring';

/**
 * The scheduling options of issue 15 measured on BullMQ itself (no app, no HTTP): how fast jobs are
 * added and taken when they are all FIFO (the old shape), when an account's backlog is ranked in the
 * prioritized set (the shape chosen, see docs/lanes.md), and the extra INCRBY per batch that ranking costs;
 * and, beside them, the core of the alternative not built: per-endpoint lanes with a ring of ready lanes
 * in Redis, taken N at a time by one script with one acknowledgement per batch (lanes-ring.ts).
 * Run: node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/lanes/queue-options.bench.ts [jobs]
 */
const JOBS = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = 200;
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function measure(name: string, priorityOf: (rank: number) => number): Promise<void> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const prefix = `bench-lanes-${process.pid}-${name}`;
  const queue = new Queue('deliveries', { connection, prefix });
  const steps = Array.from({ length: JOBS }, (_, index) => ({ eventSeq: String(index + 1), accountId: 1, series: 0, attempt: 0 }));
  const addStart = performance.now();
  for (let from = 0; from < JOBS; from += 500) {
    const ranks = await connection.incrby(`${prefix}:backlog:1`, Math.min(500, JOBS - from));
    const first = ranks - Math.min(500, JOBS - from) + 1;
    await queue.addBulk(steps.slice(from, from + 500).map((step, index) => deliveryJob(step, 0, priorityOf(first + index))));
  }
  const addMs = performance.now() - addStart;
  let done = 0;
  const takeStart = performance.now();
  await new Promise<void>((resolve) => {
    const worker = new Worker(
      'deliveries',
      async (_job: Job) => {
        done += 1;
        if (done === JOBS) resolve();
        return Promise.resolve();
      },
      { connection, prefix, concurrency: CONCURRENCY },
    );
    worker.on('error', () => undefined);
    void worker.waitUntilReady();
    void new Promise<void>((closed) => {
      const check = setInterval(() => {
        if (done === JOBS) {
          clearInterval(check);
          void worker.close().then(closed);
        }
      }, 50);
    });
  });
  const takeMs = performance.now() - takeStart;
  process.stdout.write(`${name.padEnd(8)} add ${Math.round(JOBS / (addMs / 1000))} jobs/s, take ${Math.round(JOBS / (takeMs / 1000))} jobs/s (${JOBS} jobs)\n`);
  const keys = await connection.keys(`${prefix}*`);
  if (keys.length > 0) await connection.del(...keys);
  await queue.close();
  connection.disconnect();
}

async function main(): Promise<void> {
  await measure('fifo', () => 0);
  await measure('ranked', priorityOfRank);
  for (const lanes of [1, 20]) {
    const { addPerSecond, takePerSecond, firstTurns } = await measureLanesRing(url, JOBS, lanes, CONCURRENCY);
    process.stdout.write(
      `${`ring/${lanes}`.padEnd(8)} add ${Math.round(addPerSecond)} jobs/s, take ${Math.round(takePerSecond)} jobs/s (${JOBS} jobs over ${lanes} lane(s); lanes in the first ${lanes} taken: ${firstTurns})\n`,
    );
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
