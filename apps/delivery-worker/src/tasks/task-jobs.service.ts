import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { isTaskJobData, loggableErrorText, type TaskJobData, TaskQueue, within } from '@app/runtime';
import { AccountDeletionRunner } from './account-deletion-runner.service';
import { ErasureRunner } from './erasure-runner.service';
import type { LeasedTaskRunner } from './leased-task-runner';
import { RedactionPass } from './redaction-pass.service';
import { RedeliveryRunner } from './redelivery-runner.service';

/** Jobs taken at once: each only claims a row and starts its runner, which goes on after the job. */
const JOB_CONCURRENCY = 4;
/** The longest a shutdown waits for the tasks queue's worker to close politely. */
const CLOSE_MS = 1_000;

/**
 * Takes the tasks queue's jobs (ids only, added by config-api when it records a task): the named task's
 * runner claims its row if nobody runs it and starts at once. A job is a wake-up, not the task: it
 * completes as soon as the runner started (or found the task taken, finished or unknown), and a job that
 * never arrives only means the task starts at a worker's next poll (LeasedTaskRunner.resumeAbandoned).
 */
@Injectable()
export class TaskJobs implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TaskJobs.name);
  private worker: Worker<TaskJobData> | null = null;

  constructor(
    private readonly queue: TaskQueue,
    private readonly redeliveries: RedeliveryRunner,
    private readonly erasures: ErasureRunner,
    private readonly deletions: AccountDeletionRunner,
    private readonly redaction: RedactionPass,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = this.queue.createWorker((job) => this.start(job), { concurrency: JOB_CONCURRENCY });
    this.worker.on('error', (error: Error) => this.logger.debug(`tasks queue: ${loggableErrorText(error)}`));
    this.worker.on('failed', (job, error) => this.logger.warn(`starting ${job?.data.kind ?? 'a'} task ${job?.data.id ?? ''} failed (a worker's poll takes it): ${loggableErrorText(error)}`));
  }

  /** Takes no further job; bounded like the delivery workers' close, so a Redis that is away cannot hold the shutdown. */
  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // A close that would wait for Redis is forced (Redis away, or no answer in time), and not waited for either.
    if (!this.queue.connected) {
      void worker.close(true).catch(() => undefined);
      return;
    }
    await within(worker.close(), CLOSE_MS, 'the tasks queue').catch(() => void worker.close(true).catch(() => undefined));
  }

  /** Answers whether this worker runs the task now (the job's return value, for whoever debugs with the queue). */
  async start(job: Pick<Job<TaskJobData>, 'data'>): Promise<boolean> {
    if (!isTaskJobData(job.data)) return false;
    const { kind, id } = job.data;
    if (kind === 'redaction') {
      this.redaction.wake();
      return true;
    }
    return this.runnerOf(kind).take(id);
  }

  private runnerOf(kind: Exclude<TaskJobData['kind'], 'redaction'>): LeasedTaskRunner<string> | LeasedTaskRunner<number> {
    if (kind === 'redelivery') return this.redeliveries;
    if (kind === 'erasure') return this.erasures;
    return this.deletions;
  }
}
