import { randomUUID } from 'node:crypto';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import type { Environment } from '../config/environment';
import { EARLIER_DEFAULT_QUEUE_SHARDS } from '../config/redis-topology';
import { closeRedisConnection, createRedisConnection, type RedisClient, waitForReady } from '../redis/redis-connection';
import { RedisKeys } from '../redis/redis-keys';
import { AccountBacklog, type BacklogTiming } from './account-backlog';
import { DELIVERY_QUEUE, deliveryJob, deliveryJobId, type DeliveryJobData } from './delivery-queue';
import { loggableErrorText } from '../http/database-errors';

export type DeliveryQueueRole = 'producer' | 'consumer';

/**
 * BullMQ's close drops every listener of a queue's or worker's connection wrappers, yet a wrapper whose
 * start-up is still waiting for a Redis that never became ready (a wrong password, a cluster away) fails
 * that start-up later and reports the error to nobody: an unhandled 'error' after the app closed. Each
 * wrapper gets a listener back once the close is over.
 */
export function keepHearingAfterClose(closed: Queue | Worker): void {
  const wrappers = closed as unknown as { connection?: { on?: unknown }; blockingConnection?: { on?: unknown } };
  for (const wrapper of [wrappers.connection, wrappers.blockingConnection]) {
    if (wrapper && typeof wrapper.on === 'function') (wrapper as { on(event: 'error', listener: () => void): void }).on('error', () => undefined);
  }
}

/**
 * Length BullMQ keeps of each shard's event stream (its default is 10,000). BullMQ appends to it on
 * every job state change and nothing in the service reads it: at the default, the eight streams held
 * three quarters of Redis's memory after a few thousand deliveries (docs/benchmarks.md). Trimmed
 * with `~`, a few hundred recent entries stay for whoever debugs with `XRANGE`.
 */
export const EVENTS_STREAM_MAX_LEN = 100;

/**
 * An event's shard. The shard should follow the endpoint, but producers (ingest, redelivery, the
 * reconciler, retries) know the event's account and not its push_url; an endpoint belongs to one
 * account, so all of an endpoint's events still land in one shard. Account ids are sequential, so the
 * remainder spreads them evenly.
 */
export function shardOfAccount(accountId: number, shardCount: number): number {
  return ((Math.trunc(accountId) % shardCount) + shardCount) % shardCount;
}

/**
 * The delivery queue, split into DELIVERY_QUEUE_SHARDS BullMQ queues. A BullMQ queue lives in one
 * hash slot (its prefix is hash-tagged), so on a Redis Cluster one queue would sit on one node; one
 * tag per shard lets the cluster spread them. Every process of a deployment must use the same shard
 * count, or producers and consumers would disagree about where an account's jobs are.
 *
 * The one routing abstraction: producers add through `addBulk` (which rank each job in its
 * account's backlog, AccountBacklog: fair turns between accounts), the worker consumes `consumed()` and
 * reports each job that leaves (`settled`), and whatever counts queue depth sums over `all()`.
 */
export class DeliveryQueues implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryQueues.name);
  private readonly queues: Queue[];
  private readonly workers: Worker[] = [];
  private readonly backlog: AccountBacklog;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
    private readonly shards: Environment['queueShards'],
    timing?: BacklogTiming,
  ) {
    this.backlog = new AccountBacklog(connection, this.keys, timing);
    this.queues = Array.from({ length: shards.count }, (_, shard) => this.shardQueue(shard));
  }

  /** The BullMQ queue of one shard, on this connection. */
  private shardQueue(shard: number): Queue {
    const queue = new Queue(DELIVERY_QUEUE, {
      connection: this.connection,
      prefix: this.keys.deliveryQueuePrefix(shard),
      streams: { events: { maxLen: EVENTS_STREAM_MAX_LEN } },
    });
    // Without a listener BullMQ prints every reconnect failure to stderr.
    queue.on('error', (error: Error) => this.logger.debug(`delivery queue ${shard}: ${loggableErrorText(error)}`));
    return queue;
  }

  /**
   * Producers fail fast (the event is already stored and the reconciler enqueues it later); consumers
   * ride out Redis restarts and failovers. One connection serves every shard of the process.
   * `timing`: see BacklogTiming (tests only).
   */
  static open(
    environment: Pick<Environment, 'redis' | 'redisTopology' | 'queueShards'>,
    role: DeliveryQueueRole,
    timing?: BacklogTiming,
  ): DeliveryQueues {
    const connection = createRedisConnection(environment, role === 'producer' ? 'command' : 'blocking', `delivery-${role}`);
    connection.on('error', () => undefined);
    return new DeliveryQueues(connection, RedisKeys.of(environment), environment.queueShards, timing);
  }

  /** Start-up waits this long for the connection, so the first requests need not fall back to the reconciler. */
  async ready(timeoutMs: number): Promise<boolean> {
    return waitForReady(this.connection, timeoutMs);
  }

  get shardCount(): number {
    return this.queues.length;
  }

  /** Whether the queues' own connection is up now (producers skip Redis at once when it is not). */
  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  shardOf(accountId: number): number {
    return shardOfAccount(accountId, this.queues.length);
  }

  queueFor(accountId: number): Queue {
    return this.queues[this.shardOf(accountId)];
  }

  /** Every shard's queue, in shard order: for queue depth and operators. */
  all(): readonly Queue[] {
    return this.queues;
  }

  /** The shards this process consumes (WORKER_QUEUE_SHARDS, every shard by default). */
  consumedShards(): readonly number[] {
    return this.shards.consumed;
  }

  /**
   * Shards past the count, below EARLIER_DEFAULT_QUEUE_SHARDS, that hold jobs: left by processes that
   * ran with more shards (the default before it followed the topology, or a count lowered). A worker
   * that consumes every shard drains them too, so an upgrade needs no stop of every process; without
   * it their deliveries would wait for the reconciler and their jobs stay in Redis. None when this
   * process consumes only some shards (WORKER_QUEUE_SHARDS: the operator splits the queue by hand).
   */
  async strayShards(): Promise<number[]> {
    if (this.shards.consumed.length < this.queues.length) return [];
    const stray: number[] = [];
    for (let shard = this.queues.length; shard < EARLIER_DEFAULT_QUEUE_SHARDS; shard += 1) {
      const queue = this.shardQueue(shard);
      try {
        const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'paused');
        if (Object.values(counts).some((count) => count > 0)) stray.push(shard);
      } finally {
        await queue.close().catch(() => undefined);
        keepHearingAfterClose(queue);
      }
    }
    return stray;
  }

  /**
   * One rank counter call per account touched (none for an account whose backlog this process saw
   * small a moment ago, AccountBacklog.guess: its jobs go to the FIFO list and are counted with the
   * process's next counter write), then one addBulk per shard touched, in parallel.
   * `delayMs`: one delay for all, or each step's own (the same index).
   */
  async addBulk(steps: readonly DeliveryJobData[], delayMs: number | readonly number[] = 0): Promise<void> {
    const byAccount = new Map<number, { step: DeliveryJobData; delayMs: number }[]>();
    steps.forEach((step, index) => {
      const delayed = { step, delayMs: typeof delayMs === 'number' ? delayMs : (delayMs[index] ?? 0) };
      const group = byAccount.get(step.accountId);
      if (group) group.push(delayed);
      else byAccount.set(step.accountId, [delayed]);
    });
    const byShard = new Map<number, ReturnType<typeof deliveryJob>[]>();
    await Promise.all(
      [...byAccount].map(async ([accountId, group]) => {
        const priorities = this.backlog.guess(accountId, group.length) ?? (await this.backlog.enqueue(accountId, group.length));
        const shard = this.shardOf(accountId);
        const jobs = byShard.get(shard) ?? [];
        byShard.set(shard, jobs);
        group.forEach(({ step, delayMs: delay }, index) => jobs.push(deliveryJob(step, delay, priorities[index])));
      }),
    );
    await Promise.all([...byShard].map(([shard, jobs]) => addToShard(this.queues[shard], jobs)));
  }

  /**
   * The mark of Redis's current contents: a random value the first caller writes (SET NX) and every
   * later one reads. Redis restarted without persistence, flushed or failed over to an empty replica
   * comes back without it, so a caller that remembers the last mark sees the loss as a new one.
   */
  /** How many of the account's jobs are in the queue (waiting, delayed or being worked on), as its fair-turn counter keeps them. */
  async accountJobs(accountId: number): Promise<number> {
    // The backlog counter is a scheduling hint that drifts; the shard's own counts hold every job of the
    // account (and of the other accounts on it), so the smaller of the two never under-states what the
    // account has waiting because of an inflated counter, which would stop re-queuing for ever.
    // Active jobs count too: a job a worker holds (and may move back to delayed) is still one the account has in
    // the queue, and leaving them out let a re-queuing round see room that was taken (a bound of 100 read 141).
    const [counted, inShard] = await Promise.all([this.backlog.size(accountId), this.queueFor(accountId).getJobCounts('wait', 'prioritized', 'delayed', 'active')]);
    return Math.min(counted, (inShard.wait ?? 0) + (inShard.prioritized ?? 0) + (inShard.delayed ?? 0) + (inShard.active ?? 0));
  }

  /**
   * Adds the steps whose job is not in the queue now (the reconciler's re-adds, which mostly find their
   * job still there): a job id that exists would add nothing but still count in the account's backlog.
   * Answers how many were added.
   */
  async addMissing(steps: readonly DeliveryJobData[]): Promise<number> {
    const present = await Promise.all(
      steps.map(async (step) => {
        const queue = this.queueFor(step.accountId);
        const client = (await queue.client) as unknown as Pick<RedisClient, 'exists'>;
        return (await client.exists(queue.toKey(deliveryJobId(step)))) === 1;
      }),
    );
    const missing = steps.filter((_, index) => !present[index]);
    if (missing.length > 0) await this.addBulk(missing);
    return missing.length;
  }

  /**
   * How full the Redis that holds the account's shard is: used memory over `maxmemory`, or null when no
   * limit is set (nothing to be a share of).
   */
  async memoryShare(accountId: number): Promise<number | null> {
    const client = await this.queueFor(accountId).client;
    const info = await (client as unknown as Pick<RedisClient, 'info'>).info('memory');
    const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
    const max = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? NaN);
    return Number.isFinite(used) && Number.isFinite(max) && max > 0 ? used / max : null;
  }

  async contentsMark(): Promise<string> {
    const key = this.keys.contentsMark();
    await this.connection.set(key, randomUUID(), 'NX');
    return (await this.connection.get(key)) ?? '';
  }

  /** A job of this account left the queue for good (not when it was only moved to later). */
  settled(accountId: number): void {
    this.backlog.settled(accountId);
  }

  /**
   * One BullMQ worker per consumed shard, or per shard of `shards` (strayShards), each serving one
   * queue and sharing this connection; each opens its own blocking connection. The caller runs, listens
   * to and closes them.
   */
  createWorkers(
    process: (job: Job<DeliveryJobData>, token?: string) => Promise<unknown>,
    options: Omit<WorkerOptions, 'connection' | 'prefix'>,
    shards: readonly number[] = this.shards.consumed,
  ): Worker<DeliveryJobData>[] {
    const created = shards.map(
      (shard) =>
        new Worker<DeliveryJobData>(DELIVERY_QUEUE, process, {
          ...options,
          connection: this.connection,
          prefix: this.keys.deliveryQueuePrefix(shard),
          name: `delivery-shard-${shard}`,
        }),
    );
    this.workers.push(...created);
    return created;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    // Workers normally closed already (the delivery runner drains them first); closing twice is harmless.
    await Promise.all(this.workers.map((worker) => worker.close().catch(() => undefined).finally(() => keepHearingAfterClose(worker))));
    await this.backlog.flush();
    await Promise.all(this.queues.map((queue) => queue.close().catch(() => undefined).finally(() => keepHearingAfterClose(queue))));
    await closeRedisConnection(this.connection);
  }
}

/**
 * One job is added by itself: BullMQ's addBulk goes through an ioredis pipeline, whose constructor copies
 * every script BullMQ defines onto it (52 of them, twice each), which cost ingest 26 µs an event at 1,000
 * single POSTs a second, where most statements store one event. Several jobs still share one pipeline:
 * one write to Redis instead of one each.
 */
function addToShard(queue: Queue, jobs: ReturnType<typeof deliveryJob>[]): Promise<unknown> {
  if (jobs.length === 1) return queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
  return queue.addBulk(jobs);
}
