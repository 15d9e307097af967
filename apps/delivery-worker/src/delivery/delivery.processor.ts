import { Injectable } from '@nestjs/common';
import { DelayedError, type Job, type WorkerOptions } from 'bullmq';
import { type DeliveryJobData, DeliveryQueues, type Environment, jobSpan, workerStageStamps } from '@app/runtime';
import { DeliveryPipeline } from './delivery-pipeline.service';
import type { DeliveryResult } from './outcome/outcome-recorder.service';

/**
 * Jobs each shard's BullMQ worker holds per call turn (WORKER_CONCURRENCY): the ones beyond the calls
 * in flight are loading their event, waiting for a turn or for their outcome's group commit. Holding
 * more than the turns keeps the shared event reads and outcome writes in large batches (one
 * statement for many jobs) even when a single endpoint's shard carries the whole load.
 */
export const JOBS_IN_HAND_PER_TURN = 4;

/**
 * BullMQ's lock on a running job must outlast the HTTP deadline by a wide margin, or a slow receiver
 * could see the same event twice at once (another worker takes over a job whose lock expired). BullMQ
 * also renews the lock every lockDuration/2 while the job runs, so only a frozen process loses it; the
 * margin stays moderate because it is also how long a SIGKILLed worker's jobs wait before being
 * recovered as stalled.
 */
export function deliveryWorkerOptions(environment: Environment): Omit<WorkerOptions, 'connection' | 'prefix'> {
  const { timeoutMs, workerConcurrency } = environment.delivery;
  const lockDuration = timeoutMs + Math.max(10_000, timeoutMs);
  return {
    concurrency: workerConcurrency * JOBS_IN_HAND_PER_TURN,
    lockDuration,
    // How often stalled jobs (a dead worker's) are looked for; once per interval across all workers.
    stalledInterval: Math.min(30_000, Math.max(1_000, Math.round(lockDuration / 2))),
    // Started by DeliveryRunner once PostgreSQL and Redis answer.
    autorun: false,
  };
}

/**
 * Thin: takes jobs from the BullMQ workers (one per consumed shard) and hands them to DeliveryPipeline,
 * where everything else lives. WORKER_CONCURRENCY holds for the whole process's calls (CallLimit):
 * each shard's worker may hold JOBS_IN_HAND_PER_TURN times that many jobs, and a job beyond the process's share waits for a turn
 * before its call (its lock is renewed meanwhile). Keeps count of the jobs running, so shutdown knows
 * when they are done.
 */
@Injectable()
export class DeliveryProcessor {
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly delivery: DeliveryPipeline,
    private readonly queues: DeliveryQueues,
  ) {}

  readonly process = (job: Job<DeliveryJobData>, token?: string): Promise<DeliveryResult> => {
    // Stage stamps are per event seq and follow the primary's steps; an extra destination's job of the same event must not mix in.
    const stamped = job.data.destinationId === undefined;
    if (stamped) workerStageStamps.taken(job);
    const run = jobSpan(job.data, () => this.delivery.deliver(job, token));
    // The job leaves the queue unless it was only moved to later: its account's backlog shrinks (fair turns).
    const tracked = run.then(
      () => {
        this.queues.settled(job.data.accountId);
        if (stamped) workerStageStamps.forget(job.data.eventSeq);
      },
      (error: unknown) => {
        if (error instanceof DelayedError) return;
        this.queues.settled(job.data.accountId);
        if (stamped) workerStageStamps.forget(job.data.eventSeq);
      },
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
    return run;
  };

  get activeJobs(): number {
    return this.running.size;
  }

  /** Resolves true once no job is running, or false when `timeoutMs` passed first. */
  async whenIdle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(this.running), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    return true;
  }

  /** No job starts a call from now on (shutdown). */
  stop(): void {
    this.delivery.stop();
  }

  /** Calls still waiting for an answer end now and are recorded as failed attempts. */
  abandonInFlight(): number {
    return this.delivery.abandonInFlight();
  }
}
