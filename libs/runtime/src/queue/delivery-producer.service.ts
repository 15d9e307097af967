import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { within } from '../async/within';
import { counter } from '../metrics/metrics';
import { REDIS } from '../redis/redis.module';
import { DELIVERY_QUEUE, deliveryJob, type DeliveryJobData } from './delivery-queue';

/**
 * Upper bound on waiting for Redis. BullMQ waits for its connection to become ready without limit,
 * so without this an outage at start-up would hold every request open.
 */
const ENQUEUE_TIMEOUT_MS = 1000;

const enqueueFailures = counter(
  'delivery_enqueue_failures_total',
  'Stored delivery steps whose job could not be enqueued (Redis unavailable); the reconciler enqueues them',
);

/**
 * Enqueues delivery steps whose rows are already committed. Failure is not an error for the caller:
 * the rows say what is due, and the worker's reconciler enqueues stored but unqueued steps. Job ids are
 * deterministic, so a late add racing the reconciler is a no-op.
 */
@Injectable()
export class DeliveryProducer {
  private readonly logger = new Logger(DeliveryProducer.name);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue,
    @Inject(REDIS) private readonly redis: Redis,
  ) {
    // Without a listener BullMQ prints every reconnect failure to stderr.
    this.queue.on('error', (error: Error) => this.logger.debug(`delivery queue connection: ${error.message}`));
  }

  /** One Redis round trip for all steps; resolves false (after logging) when Redis is unavailable. */
  async enqueue(steps: readonly DeliveryJobData[]): Promise<boolean> {
    if (steps.length === 0) return true;
    try {
      // The shared command connection already knows when Redis is away: do not wait for the time-out.
      if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
      await within(this.queue.addBulk(steps.map((step) => deliveryJob(step))), ENQUEUE_TIMEOUT_MS, 'Redis');
      return true;
    } catch (error) {
      enqueueFailures.inc(steps.length);
      this.logger.warn(
        `${steps.length} stored delivery step(s) could not be enqueued (${(error as Error).message}); the reconciler will enqueue them`,
      );
      return false;
    }
  }
}
