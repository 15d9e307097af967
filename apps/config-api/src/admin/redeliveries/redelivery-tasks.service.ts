import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { countMatching } from '@app/persistence';
import { DomainError, isTaskId, TaskQueue } from '@app/runtime';
import type { EventFilter, RedeliveryStarted, RedeliveryTaskView } from '@app/payloads';

/** The stored row: the view, with its times as the driver reads them. */
type TaskRow = Omit<RedeliveryTaskView, 'created_at' | 'finished_at'> & { created_at: Date; finished_at: Date | null };

const TASK_COLUMNS = 'id, status, total, done, account_id, filter, created_at, finished_at, error';

function viewOf(row: TaskRow): RedeliveryTaskView {
  return {
    id: row.id,
    status: row.status,
    total: row.total,
    done: row.done,
    account_id: row.account_id,
    filter: row.filter,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
    error: row.error,
  };
}

interface Matched {
  count: number;
  upper: string | null;
}

/**
 * Bulk redeliveries as stored tasks: the matching deliveries are counted (every destination's alike,
 * CONTRACT §11) and the newest one's event seq taken as the task's upper bound (events arriving later
 * are not part of it). config-api only records the task and announces it on the tasks queue; a delivery
 * worker's RedeliveryRunner works through it in chunks, and any worker resumes a task whose runner stopped.
 */
@Injectable()
export class RedeliveryTasks {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tasks: TaskQueue,
  ) {}

  async start(given: EventFilter): Promise<RedeliveryStarted> {
    // A search's open end is fixed now, so a task resumed later still searches the same range.
    const filter = given.q !== undefined && given.until === undefined ? { ...given, until: new Date().toISOString() } : given;
    const count = countMatching(filter);
    const [matched] = await this.dataSource.query<Matched[]>(count.sql, count.parameters);
    const finished = matched.count === 0;
    const [task] = await this.dataSource.query<{ id: string }[]>(
      `INSERT INTO redelivery_tasks (status, account_id, filter, total, upper_seq, finished_at)
       VALUES (CASE WHEN $1::boolean THEN 'done' ELSE 'running' END, $2, $3::jsonb, $4, $5, CASE WHEN $1::boolean THEN now() END)
       RETURNING id`,
      [finished, filter.account_id ?? null, JSON.stringify(filter), matched.count, matched.upper ?? 0],
    );
    // Unclaimed (no owner, no heartbeat): the worker that takes the job claims it, or a worker's poll does.
    if (!finished) await this.tasks.announce('redelivery', task.id);
    return { count: matched.count, task_id: task.id };
  }

  /** `accountId` scopes it (the portal): another account's task is missing, exactly like an unknown id. */
  async get(taskId: string, accountId?: number): Promise<RedeliveryTaskView> {
    const rows = isTaskId(taskId)
      ? await this.dataSource.query<TaskRow[]>(
          `SELECT ${TASK_COLUMNS} FROM redelivery_tasks WHERE id = $1 AND ($2::int IS NULL OR account_id = $2)`,
          [taskId, accountId ?? null],
        )
      : [];
    if (rows.length === 0) throw new DomainError('not_found', `redelivery task ${taskId} does not exist`);
    return viewOf(rows[0]);
  }

  async list(limit: number): Promise<{ items: RedeliveryTaskView[] }> {
    const rows = await this.dataSource.query<TaskRow[]>(
      `SELECT ${TASK_COLUMNS} FROM redelivery_tasks ORDER BY created_at DESC, id LIMIT $1`,
      [limit],
    );
    return { items: rows.map(viewOf) };
  }
}
