import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Worker } from 'bullmq';
import { type DeliveryJobData, DeliveryQueues, ENVIRONMENT, type Environment, loggableErrorText, type OutboundHttpClient, ReadinessService, within } from '@app/runtime';
import { DestinationSettingsCache } from './destinations/destination-settings.cache';
import { HeldFeeder } from './holding/held-feeder.service';
import { DELIVERY_HTTP_CLIENT } from './destinations/delivery-sender';
import { WorkerStoppingError } from './worker-stopping-error';
import { DeliveryProcessor, deliveryWorkerOptions } from './delivery.processor';
import { OutcomeStore } from './outcome/outcome-store';
import { AdmissionDoor } from './admission';
import { Reconciler } from './reconciler.service';

const READY_POLL_MS = 500;

/**
 * Shutdown bounds (each phase ends on time whatever Redis and PostgreSQL do, so SIGTERM ends the
 * process within about 5 s): calls in flight may finish for CALL_GRACE_MS, then are abandoned and
 * recorded as failed attempts (retried per schedule, same webhook-id); recording gets RECORD_GRACE_MS.
 */
export const SHUTDOWN_BOUNDS = { reconcilerMs: 500, callGraceMs: 1500, recordGraceMs: 1500, closeMs: 1000, drainMs: 1000, leasesMs: 250 } as const;

function bounded(work: Promise<unknown>, timeoutMs: number, what: string): Promise<string | null> {
  return within(work, timeoutMs, what).then(
    () => null,
    (error: Error) => error.message,
  );
}

/**
 * Owns the worker's start and stop order. Start: consume (one BullMQ worker per consumed queue shard)
 * only once PostgreSQL and Redis both answer (a job taken earlier could not be recorded). Stop
 * (SIGTERM, app.close): stop reconciling and taking jobs, let running jobs finish (abandoning calls
 * still waiting after a grace period), close the BullMQ workers (forcefully when Redis is away or jobs
 * could not finish), flush anything still buffered, then let go of the settings channel and the HTTP
 * pool, all before Nest closes the database and Redis connections in the shutdown hooks that follow.
 */
@Injectable()
export class DeliveryRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRunner.name);
  private stopping = false;
  private starting: Promise<void> | null = null;
  /** Looking for jobs left in shards past the count (DeliveryQueues.strayShards) and draining them. */
  private drainingStray: Promise<void> | null = null;
  private workers: Worker<DeliveryJobData>[] = [];

  constructor(
    private readonly processor: DeliveryProcessor,
    private readonly queues: DeliveryQueues,
    private readonly reconciler: Reconciler,
    private readonly feeder: HeldFeeder,
    private readonly store: OutcomeStore,
    private readonly admission: AdmissionDoor,
    private readonly settings: DestinationSettingsCache,
    @Inject(DELIVERY_HTTP_CLIENT) private readonly http: OutboundHttpClient,
    private readonly readiness: ReadinessService,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  onApplicationBootstrap(): void {
    this.starting = this.startWhenReady();
  }

  /**
   * Stops taking jobs. By default waits for the running ones (and cancels a pending blocking fetch, so
   * no job slips in afterwards); `immediately` only flips the local flag, with no Redis round trip.
   */
  async pause(immediately = false): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.pause(immediately)));
  }

  resume(): void {
    for (const worker of this.workers) worker.resume();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.starting;
    await this.drainingStray;
    const problems: (string | null)[] = [
      await bounded(Promise.all([this.reconciler.stop(), this.feeder.stop()]), SHUTDOWN_BOUNDS.reconcilerMs, 'the reconciler and the feeder'),
    ];
    // Local only (no Redis round trip): the workers take no further job, and jobs waiting for a call start none.
    this.processor.stop();
    // Jobs waiting here for an endpoint lease start no call either; idle leases go back to Redis for the other workers.
    problems.push(await bounded(this.admission.stop(), SHUTDOWN_BOUNDS.leasesMs, 'returning idle endpoint leases'));
    await this.pause(true);
    let idle = await this.processor.whenIdle(SHUTDOWN_BOUNDS.callGraceMs);
    if (!idle) {
      const abandoned = this.processor.abandonInFlight();
      if (abandoned > 0) this.logger.warn(`abandoned ${abandoned} callback call(s) still waiting for an answer; they are recorded as failed attempts and retried`);
      idle = await this.processor.whenIdle(SHUTDOWN_BOUNDS.recordGraceMs);
    }
    // A graceful close waits for Redis; when Redis is away (or jobs are stuck on it) drop the connections instead.
    const force = !idle || !this.queues.connected;
    problems.push(await bounded(Promise.all(this.workers.map((worker) => worker.close(force))), SHUTDOWN_BOUNDS.closeMs, 'closing the queue workers'));
    problems.push(await bounded(this.store.drain(), SHUTDOWN_BOUNDS.drainMs, 'recording the last attempts'));
    await this.settings.onApplicationShutdown();
    // Abandoned calls may still hold sockets: do not wait for their deadline.
    problems.push(await bounded(this.http.close(), 250, 'closing the HTTP pool'));
    const reported = problems.filter((problem): problem is string => problem !== null);
    if (reported.length > 0) this.logger.warn(`stopped with loose ends: ${reported.join('; ')}`);
    if (this.processor.activeJobs > 0) {
      this.logger.warn(`${this.processor.activeJobs} job(s) could not finish; their deliveries stay pending and are picked up again (stalled jobs, reconciler)`);
    }
  }

  private async startWhenReady(): Promise<void> {
    let waitingSince: number | null = null;
    while (!this.stopping) {
      const problem = await this.readinessProblem();
      if (problem === null) {
        if (this.stopping) return;
        this.consume();
        return;
      }
      if (waitingSince === null) {
        waitingSince = Date.now();
        this.logger.warn(`waiting for dependencies before consuming: ${problem}`);
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    }
  }

  private consume(): void {
    const options = deliveryWorkerOptions(this.environment);
    this.workers = this.queues.createWorkers(this.processor.process, options);
    for (const worker of this.workers) this.run(worker);
    this.reconciler.start();
    this.feeder.start();
    this.logger.log(`consuming deliveries from ${this.workers.length} queue shard(s) (concurrency ${options.concurrency ?? 1} each)`);
    this.drainingStray = this.drainStrayShards(options);
  }

  /** Adds a worker for each shard past the count that holds jobs: their deliveries need not wait for the reconciler. */
  private async drainStrayShards(options: ReturnType<typeof deliveryWorkerOptions>): Promise<void> {
    const stray = await this.queues.strayShards().catch((error: unknown) => {
      this.logger.warn(`could not look for jobs left in queue shards past ${this.queues.shardCount}: ${loggableErrorText(error)}`);
      return [];
    });
    if (this.stopping || stray.length === 0) return;
    this.logger.warn(`draining jobs left in queue shard(s) ${stray.join(', ')}, past the ${this.queues.shardCount} that DELIVERY_QUEUE_SHARDS sets`);
    const drainers = this.queues.createWorkers(this.processor.process, options, stray);
    this.workers.push(...drainers);
    for (const worker of drainers) this.run(worker);
  }

  private run(worker: Worker<DeliveryJobData>): void {
    // A worker without an error listener would crash the process on a Redis reconnect.
    worker.on('error', (error: Error) => this.logger.warn(`delivery worker ${worker.name}: ${loggableErrorText(error)}`));
    // Delayed jobs do not come here; failures do, and the reconciler re-enqueues their still-pending events.
    worker.on('failed', (job, error: Error) => {
      if (error instanceof WorkerStoppingError) this.logger.debug(`delivery job ${job?.id ?? '?'} left for later: ${loggableErrorText(error)}`);
      else this.logger.warn(`delivery job ${job?.id ?? '?'} failed: ${loggableErrorText(error)}`);
    });
    worker.run().catch((error: Error) => this.logger.error(`delivery worker ${worker.name} stopped: ${loggableErrorText(error)}`));
  }

  private async readinessProblem(): Promise<string | null> {
    const report = await this.readiness.check();
    if (report.status === 'ok') return null;
    return Object.entries(report.checks)
      .filter(([, state]) => state !== 'ok')
      .map(([dependency, state]) => `${dependency} ${state}`)
      .join('; ');
  }
}
