import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import type { Environment } from '../config/environment';
import { within } from '../async/within';
import { loggableErrorText } from '../http/database-errors';
import { closeRedisConnection, createRedisConnection, type RedisClient, waitForReady } from '../redis/redis-connection';
import { RedisKeys } from '../redis/redis-keys';
import { EVENTS_STREAM_MAX_LEN, keepHearingAfterClose } from './delivery-queues';

/** The BullMQ queue telling delivery workers that a task was recorded (config-api adds, workers take). */
export const TASK_QUEUE = 'tasks';
const TASK_JOB_NAME = 'task';

/**
 * The kinds of background work, each stored as rows the worker's runners lease: bulk redeliveries
 * (redelivery_tasks), erasures (erasure_tasks), offboardings (account_deletions, by account id), and
 * redaction at rest (an account's callback_settings: its fields and how far the pass has come).
 */
export const TASK_KINDS = ['redelivery', 'erasure', 'account-deletion', 'redaction'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/**
 * Ids only: what to do lives in the task's row (its filter, subject, cursor), never in Redis. The job
 * only wakes a worker at once; workers also look for unclaimed and abandoned rows on their own, so a
 * lost job loses no task.
 */
export interface TaskJobData {
  kind: TaskKind;
  id: string;
}

const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A task id as the tables of redeliveries and erasures store them (uuid): anything else is simply not found. */
export function isTaskId(id: string): boolean {
  return TASK_ID.test(id);
}

export function isTaskJobData(data: unknown): data is TaskJobData {
  if (typeof data !== 'object' || data === null) return false;
  const { kind, id } = data as Record<string, unknown>;
  return typeof id === 'string' && (TASK_KINDS as readonly unknown[]).includes(kind);
}

/** An announcement may not hold up the call that recorded the task longer than this (the workers' poll finds the row anyway). */
const ANNOUNCE_TIMEOUT_MS = 1000;
/** Closing the queue (and the worker's BullMQ worker) waits at most this long for Redis. */
const CLOSE_TIMEOUT_MS = 1000;

export type TaskQueueRole = 'producer' | 'consumer';

/**
 * The tasks queue: one BullMQ queue under a hash-tagged prefix (one slot on a Redis Cluster). A job's
 * id is its kind and task id, so announcing a task twice while its first job waits adds nothing.
 */
export class TaskQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(TaskQueue.name);
  private readonly queue: Queue<TaskJobData>;
  private readonly workers: Worker<TaskJobData>[] = [];

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.queue = new Queue<TaskJobData>(TASK_QUEUE, { connection, prefix: keys.taskQueuePrefix(), streams: { events: { maxLen: EVENTS_STREAM_MAX_LEN } } });
    this.queue.on('error', (error: Error) => this.logger.debug(`task queue: ${loggableErrorText(error)}`));
  }

  /** config-api announces and fails fast while Redis is away; workers ride out restarts and failovers. */
  static open(environment: Pick<Environment, 'redis' | 'redisTopology'>, role: TaskQueueRole): TaskQueue {
    const connection = createRedisConnection(environment, role === 'producer' ? 'command' : 'blocking', `tasks-${role}`);
    connection.on('error', () => undefined);
    return new TaskQueue(connection, RedisKeys.of(environment));
  }

  ready(timeoutMs: number): Promise<boolean> {
    return waitForReady(this.connection, timeoutMs);
  }

  /** Whether the queue's connection is up now (a close that would wait for Redis is forced when it is not). */
  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  /**
   * Asks a worker to start the task now. The task is already stored: should Redis be away, this logs
   * and answers false, and a worker's poll takes the task within its interval.
   */
  async announce(kind: TaskKind, id: string | number): Promise<boolean> {
    const data: TaskJobData = { kind, id: String(id) };
    try {
      if (!this.connected) throw new Error('the Redis connection is not ready');
      await within(
        this.queue.add(TASK_JOB_NAME, data, { jobId: `${kind}-${data.id}`, removeOnComplete: true, removeOnFail: true }),
        ANNOUNCE_TIMEOUT_MS,
        'Redis',
      );
      return true;
    } catch (error) {
      this.logger.warn(`${kind} task ${data.id} is stored but its job could not be added (${loggableErrorText(error)}); a worker's poll will start it`);
      return false;
    }
  }

  /** Jobs waiting for a worker (tests and operators). */
  waiting(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  /** The worker that takes the jobs; the caller runs and closes it (close() closes it too). */
  createWorker(process: (job: Job<TaskJobData>) => Promise<unknown>, options: Omit<WorkerOptions, 'connection' | 'prefix'> = {}): Worker<TaskJobData> {
    const worker = new Worker<TaskJobData>(TASK_QUEUE, process, { ...options, connection: this.connection, prefix: this.keys.taskQueuePrefix(), name: 'tasks' });
    this.workers.push(worker);
    return worker;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Each close bounded: with Redis away, BullMQ's may wait for it without end, and the connection is dropped anyway. */
  async close(): Promise<void> {
    const bounded = (closing: Promise<void>): Promise<void> => within(closing, CLOSE_TIMEOUT_MS, 'Redis').catch(() => undefined);
    await Promise.all(this.workers.map((worker) => bounded(worker.close()).finally(() => keepHearingAfterClose(worker))));
    await bounded(this.queue.close()).finally(() => keepHearingAfterClose(this.queue));
    await closeRedisConnection(this.connection);
  }
}
