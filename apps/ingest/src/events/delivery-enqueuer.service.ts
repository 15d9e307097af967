import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { DELIVERY_QUEUE, deliveryJob, REDIS } from '@app/runtime';
import { enqueueFailures } from './ingest-metrics';

/**
 * Upper bound on waiting for Redis. BullMQ waits for its connection to become ready without limit,
 * so without this an outage at start-up would hold every request open.
 */
const ENQUEUE_TIMEOUT_MS = 1000;

async function within<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Enqueues the first delivery step of stored events. Failure is not an error for the caller: the rows
 * are already committed with next_attempt_at = now(), and the worker's reconciler enqueues stored but
 * unqueued events. Job ids are deterministic, so a late add racing the reconciler is a no-op.
 */
@Injectable()
export class DeliveryEnqueuer {
  private readonly logger = new Logger(DeliveryEnqueuer.name);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue,
    @Inject(REDIS) private readonly redis: Redis,
  ) {
    // Without a listener BullMQ prints every reconnect failure to stderr.
    this.queue.on('error', (error: Error) => this.logger.debug(`delivery queue connection: ${error.message}`));
  }

  /** One Redis round trip for all given events; resolves false (after logging) when Redis is unavailable. */
  async enqueueFirstAttempts(eventSeqs: readonly string[]): Promise<boolean> {
    if (eventSeqs.length === 0) return true;
    const jobs = eventSeqs.map((eventSeq) => deliveryJob({ eventSeq, series: 0, attempt: 0 }));
    try {
      // The shared command connection already knows Redis is away: do not wait for the time-out.
      if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
      await within(this.queue.addBulk(jobs), ENQUEUE_TIMEOUT_MS);
      return true;
    } catch (error) {
      enqueueFailures.inc(eventSeqs.length);
      this.logger.warn(
        `stored ${eventSeqs.length} event(s) but could not enqueue them (${(error as Error).message}); the reconciler will enqueue them`,
      );
      return false;
    }
  }
}
