import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type DeliveryCursor, nextMatching, REDELIVERY_CHUNK, RESTART_DELIVERIES, Sql } from '@app/persistence';
import { type DeliveryJobData, DeliveryProducer, DeliveryQueues, ENVIRONMENT, type Environment, isTaskId, loggableErrorText, stepOfRow, within } from '@app/runtime';
import type { EventFilter } from '@app/payloads';
import { describeTaskFailure, isPassingFailure, LeasedTaskRunner } from './leased-task-runner';

interface ClaimedTask {
  filter: EventFilter;
  upper_seq: string;
  below_seq: string | null;
  destination_below_id: string | null;
}

/** A chunk applied: the first steps to enqueue, and whether the task has nothing left after it. */
interface AppliedChunk {
  steps: DeliveryJobData[];
  last: boolean;
}

/** How long a task waits for the queue to take its account's jobs before looking again. */
const ROOM_WAIT_MS = 500;
/** Measuring the room waits this long for Redis (inside the chunk's transaction, which holds the task row). */
const ROOM_TIMEOUT_MS = 1_000;

/**
 * Works through bulk redelivery tasks (a LeasedTaskRunner: recorded by config-api, owned by a worker
 * while its heartbeat is fresh, resumed by any worker once it is not): the matching deliveries, every destination's alike, newest first below
 * the task's cursor. Re-queuing is bounded by what it feeds (CONTRACT §10): a chunk restarts no more
 * deliveries than the account may still have in the queue (REQUEUE_MAX_WAITING less its jobs there), and
 * none while Redis is fuller than REQUEUE_MAX_REDIS_MEMORY_PERCENT of its maxmemory; the task waits and
 * goes on as the workers take jobs, so `done` counts what was re-queued so far. Every chunk re-checks
 * ownership under a row lock in the same transaction that restarts the deliveries and moves the cursor,
 * so a chunk is applied exactly once even when a slow runner and the one that took its task over race.
 * Jobs are enqueued after the commit; should that fail, the reconciler finds the restarted deliveries.
 */
@Injectable()
export class RedeliveryRunner extends LeasedTaskRunner<string> {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly producer: DeliveryProducer,
    private readonly queues: DeliveryQueues,
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {
    super(dataSource, 'redelivery_tasks', 'redelivery task');
  }

  protected idOf(text: string): string | null {
    return isTaskId(text) ? text : null;
  }

  protected async work(taskId: string): Promise<void> {
    try {
      while (!this.stopping && (await this.chunk(taskId)));
    } catch (error) {
      if (isPassingFailure(error)) {
        // The database is away (or a deadlock/serialization victim): the task stays running and its
        // stale heartbeat lets a process (this one included) resume it from the last committed chunk.
        this.logger.warn(`redelivery task ${taskId} paused: ${loggableErrorText(error)}`);
        return;
      }
      // Anything else would fail again on every resume: stop with the reason for operators to read.
      this.logger.error(`redelivery task ${taskId} failed: ${loggableErrorText(error)}`);
      await this.dataSource
        .query(
          `UPDATE redelivery_tasks SET status = 'failed', error = $3, finished_at = now()
            WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
          [taskId, this.owner, describeTaskFailure(error)],
        )
        .catch((failure: unknown) => this.logger.warn(`recording the failure of task ${taskId}: ${loggableErrorText(failure)}`));
    }
  }

  /** One chunk in one transaction; true while more may remain. */
  private async chunk(taskId: string): Promise<boolean> {
    const applied = await this.dataSource.transaction(async (manager): Promise<AppliedChunk | null> => {
      const [task] = await manager.query<ClaimedTask[]>(
        `SELECT filter, upper_seq::text AS upper_seq, below_seq::text AS below_seq, destination_below_id
           FROM redelivery_tasks WHERE id = $1 AND lease_owner = $2 AND status = 'running' FOR UPDATE`,
        [taskId, this.owner],
      );
      if (!task) return null;
      const room = Math.min(REDELIVERY_CHUNK, await this.room(task.filter.account_id));
      if (room <= 0) {
        await manager.query(`UPDATE redelivery_tasks SET heartbeat_at = now() WHERE id = $1`, [taskId]);
        return { steps: [], last: false };
      }
      const cursor: DeliveryCursor | null = task.below_seq !== null && task.destination_below_id !== null ? { seq: task.below_seq, destinationId: task.destination_below_id } : null;
      const next = nextMatching(task.filter, task.upper_seq, cursor, room);
      const picked = await manager.query<{ event_seq: string; destination_id: string }[]>(next.sql, next.parameters);
      const rows = picked.length === 0 ? [] : await this.sql.rows(RESTART_DELIVERIES, { seqs: picked.map((row) => row.event_seq), destinationIds: picked.map((row) => row.destination_id) }, manager.queryRunner);
      const lowest = picked.at(-1);
      await manager.query(
        `UPDATE redelivery_tasks
            SET done = done + $2, below_seq = COALESCE($3::bigint, below_seq), destination_below_id = COALESCE($4, destination_below_id), heartbeat_at = now()
          WHERE id = $1`,
        [taskId, rows.length, lowest?.event_seq ?? null, lowest?.destination_id ?? null],
      );
      return { steps: rows.map(stepOfRow), last: picked.length < room };
    });
    if (!applied) return false;
    if (applied.steps.length === 0 && !applied.last) {
      await new Promise((resolve) => setTimeout(resolve, ROOM_WAIT_MS));
      return true;
    }
    await this.producer.enqueue(applied.steps);
    // "done" only once the last chunk's jobs are in the queue: a reader that sees it may count on them.
    // A runner dying in between leaves the task running; whoever resumes it finds nothing left and ends it.
    if (applied.last) await this.finish(taskId);
    return !applied.last;
  }

  /**
   * How many more jobs the queue takes for this task now: for one account's task, what the account may
   * still add under REQUEUE_MAX_WAITING; for one across accounts, what the whole queue may (the same bound
   * on its waiting jobs). 0 while Redis is too full.
   */
  private async room(accountId: number | undefined): Promise<number> {
    // Redis away: no room (the task waits and looks again) rather than a failure, and no wait on a connection that queues commands.
    if (!this.queues.connected) return 0;
    try {
      return await within(this.measureRoom(accountId), ROOM_TIMEOUT_MS, 'Redis');
    } catch (error) {
      this.logger.debug(`measuring the queue's room failed: ${loggableErrorText(error)}`);
      return 0;
    }
  }

  private async measureRoom(accountId: number | undefined): Promise<number> {
    const { requeueMaxWaiting, requeueMaxRedisMemory } = this.environment.delivery;
    const share = await this.queues.memoryShare(accountId ?? 0);
    if (share !== null && share >= requeueMaxRedisMemory) return 0;
    if (accountId !== undefined) return requeueMaxWaiting - (await this.queues.accountJobs(accountId));
    const waiting = await Promise.all(this.queues.all().map((queue) => queue.getWaitingCount()));
    return requeueMaxWaiting - waiting.reduce((sum, count) => sum + count, 0);
  }

  private async finish(taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE redelivery_tasks SET status = 'done', finished_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
      [taskId, this.owner],
    );
  }
}
