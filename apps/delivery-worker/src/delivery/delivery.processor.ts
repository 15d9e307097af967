import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, type Provider } from '@nestjs/common';
import type { Job, WorkerOptions } from 'bullmq';
import { DELIVERY_QUEUE, type DeliveryJobData, ENVIRONMENT, type Environment } from '@app/runtime';
import { type DeliveryResult, DeliveryService } from './delivery.service';

/**
 * BullMQ's lock on a running job must outlast the HTTP deadline by a wide margin, or a slow receiver
 * could see the same event twice at once (another worker takes over a job whose lock expired). BullMQ
 * also renews the lock every lockDuration/2 while the job runs, so only a frozen process loses it; the
 * margin stays moderate because it is also how long a SIGKILLed worker's jobs wait before being
 * recovered as stalled.
 */
export function deliveryWorkerOptions(environment: Environment): Omit<WorkerOptions, 'connection'> {
  const { timeoutMs, workerConcurrency } = environment.delivery;
  const lockDuration = timeoutMs + Math.max(10_000, timeoutMs);
  return {
    concurrency: workerConcurrency,
    lockDuration,
    // How often stalled jobs (a dead worker's) are looked for; once per interval across all workers.
    stalledInterval: Math.min(30_000, Math.max(1_000, Math.round(lockDuration / 2))),
    // Started by DeliveryRunner once PostgreSQL and Redis answer.
    autorun: false,
  };
}

/** Thin: takes jobs from BullMQ and hands them to DeliveryService, where everything else lives. */
export class DeliveryProcessor extends WorkerHost {
  private readonly logger = new Logger(DeliveryProcessor.name);

  constructor(private readonly delivery: DeliveryService) {
    super();
  }

  async process(job: Job<DeliveryJobData>, token?: string): Promise<DeliveryResult> {
    return this.delivery.deliver(job, token);
  }

  /** A worker without an error listener would crash the process on a Redis reconnect. */
  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logger.warn(`delivery worker: ${error.message}`);
  }

  /** Delayed jobs do not come here; failures do, and the reconciler re-enqueues their still-pending events. */
  @OnWorkerEvent('failed')
  onFailed(job: Job<DeliveryJobData> | undefined, error: Error): void {
    this.logger.warn(`delivery job ${job?.id ?? '?'} failed: ${error.message}`);
  }
}

/**
 * `@Processor` options are read from class metadata, but concurrency and lockDuration come from the
 * injected Environment (tests override it): so each app decorates its own subclass with its settings.
 * @nestjs/bullmq looks at the instance's constructor for factory providers, which is this subclass.
 */
export const deliveryProcessorProvider: Provider = {
  provide: DeliveryProcessor,
  inject: [ENVIRONMENT, DeliveryService],
  useFactory: (environment: Environment, delivery: DeliveryService): DeliveryProcessor => {
    class ConfiguredDeliveryProcessor extends DeliveryProcessor {}
    Processor(DELIVERY_QUEUE, deliveryWorkerOptions(environment))(ConfiguredDeliveryProcessor);
    return new ConfiguredDeliveryProcessor(delivery);
  },
};
