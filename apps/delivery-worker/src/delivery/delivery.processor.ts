import { Inject, Injectable } from '@nestjs/common';
import type { Job, WorkerOptions } from 'bullmq';
import { type DeliveryJobData, ENVIRONMENT, type Environment } from '@app/runtime';
import { WorkerStoppingError } from './callback-exchange';
import { type DeliveryResult, DeliveryService } from './delivery.service';

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
    concurrency: workerConcurrency,
    lockDuration,
    // How often stalled jobs (a dead worker's) are looked for; once per interval across all workers.
    stalledInterval: Math.min(30_000, Math.max(1_000, Math.round(lockDuration / 2))),
    // Started by DeliveryRunner once PostgreSQL and Redis answer.
    autorun: false,
  };
}

/**
 * Thin: takes jobs from the BullMQ workers (one per consumed shard) and hands them to DeliveryService,
 * where everything else lives. WORKER_CONCURRENCY holds for the whole process: each shard's worker may
 * take that many jobs, and a job beyond the process's share waits here for a turn (its lock is renewed
 * meanwhile). Keeps count of the jobs running, so shutdown knows when they are done.
 */
@Injectable()
export class DeliveryProcessor {
  private readonly running = new Set<Promise<unknown>>();
  private readonly turns: (() => void)[] = [];
  private inTurn = 0;
  private stopping = false;

  constructor(
    private readonly delivery: DeliveryService,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  readonly process = (job: Job<DeliveryJobData>, token?: string): Promise<DeliveryResult> => {
    const run = this.withTurn(() => this.delivery.deliver(job, token));
    const tracked = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
    return run;
  };

  private async withTurn<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTurn >= this.environment.delivery.workerConcurrency) await new Promise<void>((resolve) => this.turns.push(resolve));
    else this.inTurn += 1;
    try {
      // A job that waited for its turn while the worker began to stop is left for later.
      if (this.stopping) throw new WorkerStoppingError();
      return await work();
    } finally {
      // The turn passes straight to the next waiting job, if any.
      const next = this.turns.shift();
      if (next) next();
      else this.inTurn -= 1;
    }
  }

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
    this.stopping = true;
  }

  /** Calls still waiting for an answer end now and are recorded as failed attempts. */
  abandonInFlight(): number {
    return this.delivery.abandonInFlight();
  }
}
