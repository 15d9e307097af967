import type { Job, Queue } from 'bullmq';
import type { QueueState as QueueDepth } from '@app/payloads';
import { gauge } from '../metrics/metrics';
import { within } from '../async/within';

/**
 * `GET /admin/v1/queue` and the queue gauges: the delivery queue summed over every queue (shard) given;
 * the shape is the admin API's, declared once for the server and the console.
 */
export type { QueueDepth };

function dueAt(job: Job | undefined): number | null {
  return job ? job.timestamp + (job.delay ?? 0) : null;
}

/**
 * One small function for any number of queues, so sharding the delivery queue changes only the list
 * passed in. A delayed job past its due time counts for the oldest age: with no worker running,
 * nobody promotes it, and that is exactly what operators need to see.
 */
export async function queueDepth(queues: readonly Queue[], now = Date.now()): Promise<QueueDepth> {
  const perQueue = await Promise.all(
    queues.map(async (queue) => {
      const [counts, [oldestWaiting], [firstDelayed], [nextRanked]] = await Promise.all([
        queue.getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'),
        queue.getJobs(['wait'], 0, 0, true),
        queue.getJobs(['delayed'], 0, 0, true),
        // Backlogs beyond an account's first jobs wait ranked (DeliveryQueues); the next of them is a waiting job too.
        queue.getJobs(['prioritized'], 0, 0, true),
      ]);
      const candidates = [dueAt(oldestWaiting), dueAt(firstDelayed), dueAt(nextRanked)].filter((at): at is number => at !== null && at <= now);
      return { counts, oldest: candidates.length ? Math.min(...candidates) : null };
    }),
  );
  const sum = (state: string): number => perQueue.reduce((total, { counts }) => total + (counts[state] ?? 0), 0);
  const oldestTimes = perQueue.map(({ oldest }) => oldest).filter((at): at is number => at !== null);
  const oldest = oldestTimes.length ? Math.min(...oldestTimes) : null;
  return {
    waiting: sum('wait') + sum('prioritized'),
    active: sum('active'),
    delayed: sum('delayed'),
    failed: sum('failed'),
    oldest_waiting_at: oldest === null ? null : new Date(oldest).toISOString(),
    oldest_waiting_age_seconds: oldest === null ? null : Math.max(0, (now - oldest) / 1000),
  };
}

/**
 * Queue gauges read on scrape (so they cost nothing between scrapes). Both gauges share one reading
 * per scrape (prom-client collects metrics concurrently). Registered once per process; the source is
 * replaced when an app (or a test's second app) registers again.
 */
let depthSource: (() => Promise<QueueDepth>) | null = null;
let reading: { at: number; depth: Promise<QueueDepth | null> } | null = null;

function currentDepth(): Promise<QueueDepth | null> {
  const now = Date.now();
  if (!reading || now - reading.at > 1000) {
    const source = depthSource;
    // A scrape while Redis is away reports nothing for these gauges rather than failing the whole scrape.
    reading = { at: now, depth: source ? within(source(), 2000, 'Redis').catch(() => null) : Promise.resolve(null) };
  }
  return reading.depth;
}

export function registerQueueDepthGauges(source: () => Promise<QueueDepth>): void {
  depthSource = source;
  reading = null;
  gauge('delivery_queue_jobs', 'Delivery queue jobs by state (waiting, active, delayed, failed), summed over shards', ['state'], async function collect() {
    const depth = await currentDepth();
    if (!depth) return;
    for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) this.set({ state }, depth[state]);
  });
  gauge(
    'delivery_queue_oldest_waiting_age_seconds',
    'Age of the oldest delivery job that is due and not yet taken (0 when none)',
    [],
    async function collect() {
      const depth = await currentDepth();
      if (depth) this.set(depth.oldest_waiting_age_seconds ?? 0);
    },
  );
}
