import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type DestinationStepRow, RESTART_SERIES } from '@app/persistence';
import { type DeliveryJobData, DeliveryProducer, loggableErrorText, pendingDestinationStep, restartedSeriesStep } from '@app/runtime';
import type { EventFilter } from '@app/payloads';
import { addEventFilter } from '../events/event-filter';
import { Conditions } from '../sql-conditions';
import { isPassingFailure, LeasedTaskRunner } from '../leased-task-runner';
import { REDELIVERY_CHUNK, type RestartedRow } from './restart-series';
import { cursorAfter, restartDestinationChunk } from './destination-matches';

export { TASK_STALE_AFTER_S } from '../leased-task-runner';

interface ClaimedTask {
  filter: EventFilter;
  upper_seq: string;
  below_seq: string | null;
  phase: 'events' | 'destinations';
  destination_below_seq: string | null;
  destination_below_id: string | null;
}

/** A chunk applied: the first steps to enqueue, and whether the task has nothing left after it. */
interface AppliedChunk {
  steps: DeliveryJobData[];
  last: boolean;
}

/**
 * Works through bulk redelivery tasks (a LeasedTaskRunner: owned while its heartbeat is fresh,
 * resumed by any process once it is not): first the primary's deliveries (the events), then the
 * other destinations' (CONTRACT §11), each phase with its own cursor. Every chunk re-checks ownership under a row lock in the
 * same transaction that restarts the events and advances `done`/`below_seq`, so a chunk is applied
 * exactly once even when a slow runner and the one that took its task over race. Jobs are enqueued
 * after the commit; should that fail, the worker's reconciler enqueues the restarted rows.
 */
@Injectable()
export class RedeliveryRunner extends LeasedTaskRunner<string> {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly producer: DeliveryProducer,
  ) {
    super(dataSource, 'redelivery_tasks', 'redelivery task');
  }

  protected async work(taskId: string): Promise<void> {
    try {
      while (!this.stopping && (await this.chunk(taskId)));
    } catch (error) {
      const message = (error as Error).message;
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
          [taskId, this.owner, message.slice(0, 1000)],
        )
        .catch((failure: unknown) => this.logger.warn(`recording the failure of task ${taskId}: ${loggableErrorText(failure)}`));
    }
  }

  /** One chunk in one transaction; true while more may remain. */
  private async chunk(taskId: string): Promise<boolean> {
    const applied = await this.dataSource.transaction(async (manager): Promise<AppliedChunk | null> => {
      const [task] = await manager.query<ClaimedTask[]>(
        `SELECT filter, upper_seq::text AS upper_seq, below_seq::text AS below_seq, phase,
                destination_below_seq::text AS destination_below_seq, destination_below_id
           FROM redelivery_tasks WHERE id = $1 AND lease_owner = $2 AND status = 'running' FOR UPDATE`,
        [taskId, this.owner],
      );
      if (!task) return null;
      return task.phase === 'events' ? this.eventsChunk(manager, taskId, task) : this.destinationsChunk(manager, taskId, task);
    });
    if (!applied) return false;
    await this.producer.enqueue(applied.steps);
    // "done" only once the last chunk's jobs are in the queue: a reader that sees it may count on them.
    // A runner dying in between leaves the task running; whoever resumes it finds nothing left and ends it.
    if (applied.last) await this.finish(taskId);
    return !applied.last;
  }

  /** The primary's deliveries: events restarted newest first; the last chunk moves the task on to the other destinations. */
  private async eventsChunk(manager: EntityManager, taskId: string, task: ClaimedTask): Promise<AppliedChunk> {
    const conditions = new Conditions();
    addEventFilter(conditions, task.filter);
    conditions.add((p) => `seq <= ${p}::bigint`, task.upper_seq);
    if (task.below_seq !== null) conditions.add((p) => `seq < ${p}::bigint`, task.below_seq);
    const limit = conditions.next(REDELIVERY_CHUNK);
    const [rows] = await manager.query<[RestartedRow[], number]>(
      `WITH picked AS (
         SELECT seq FROM events ${conditions.where()} ORDER BY seq DESC LIMIT ${limit} FOR UPDATE
       )
       UPDATE events SET ${RESTART_SERIES}
         FROM picked
        WHERE events.seq = picked.seq
       RETURNING events.seq::text AS seq, events.series, events.account_id`,
      conditions.parameters,
    );
    const lastOfPhase = rows.length < REDELIVERY_CHUNK;
    const lowest = rows.reduce<string | null>((low, row) => (low === null || BigInt(row.seq) < BigInt(low) ? row.seq : low), null);
    await manager.query(
      `UPDATE redelivery_tasks
          SET done = done + $2, below_seq = COALESCE($3::bigint, below_seq), heartbeat_at = now(),
              phase = CASE WHEN $4::boolean THEN 'destinations' ELSE phase END
        WHERE id = $1`,
      [taskId, rows.length, lowest, lastOfPhase],
    );
    return { steps: rows.map(restartedSeriesStep), last: false };
  }

  /** The other destinations' deliveries, newest first, below the phase's own cursor. */
  private async destinationsChunk(manager: EntityManager, taskId: string, task: ClaimedTask): Promise<AppliedChunk> {
    const cursor = task.destination_below_seq !== null && task.destination_below_id !== null ? { seq: task.destination_below_seq, destinationId: task.destination_below_id } : null;
    const chunk = restartDestinationChunk(task.filter, task.upper_seq, cursor);
    const rows = await manager.query<DestinationStepRow[]>(chunk.sql, chunk.parameters);
    const next = cursorAfter(rows);
    await manager.query(
      `UPDATE redelivery_tasks
          SET done = done + $2, destination_below_seq = COALESCE($3::bigint, destination_below_seq),
              destination_below_id = COALESCE($4, destination_below_id), heartbeat_at = now()
        WHERE id = $1`,
      [taskId, rows.length, next?.seq ?? null, next?.destinationId ?? null],
    );
    return { steps: rows.map(pendingDestinationStep), last: rows.length < REDELIVERY_CHUNK };
  }

  private async finish(taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE redelivery_tasks SET status = 'done', finished_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
      [taskId, this.owner],
    );
  }
}
