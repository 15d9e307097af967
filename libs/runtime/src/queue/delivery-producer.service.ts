import { Injectable, Logger } from '@nestjs/common';
import { within } from '../async/within';
import { counter } from '../metrics/metrics';
import type { DeliveryJobData } from './delivery-queue';
import { DeliveryQueues } from './delivery-queues';
import { loggableErrorText } from '../http/database-errors';

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

  constructor(private readonly queues: DeliveryQueues) {}

  /** One Redis round trip per shard touched; resolves false (after logging) when Redis is unavailable. */
  async enqueue(steps: readonly DeliveryJobData[]): Promise<boolean> {
    if (steps.length === 0) return true;
    try {
      // The connection already knows when Redis is away: do not wait for the time-out.
      if (!this.queues.connected) throw new Error('the Redis connection is not ready');
      await within(this.queues.addBulk(steps), ENQUEUE_TIMEOUT_MS, 'Redis');
      return true;
    } catch (error) {
      enqueueFailures.inc(steps.length);
      this.logger.warn(
        `${steps.length} stored delivery step(s) could not be enqueued (${loggableErrorText(error)}); the reconciler will enqueue them`,
      );
      return false;
    }
  }
}
