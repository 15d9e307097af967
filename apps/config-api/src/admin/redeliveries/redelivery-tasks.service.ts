import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { countMatching, Sql } from '@app/persistence';
import { DomainError, isTaskId, TaskQueue } from '@app/runtime';
import type { EventFilter, RedeliveryStarted, RedeliveryTaskView } from '@app/payloads';
import { NEWEST_REDELIVERY_TASKS, RECORD_REDELIVERY_TASK, REDELIVERY_TASK, type TaskRow } from './redelivery-tasks.statements';

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
    private readonly sql: Sql,
    private readonly tasks: TaskQueue,
  ) {}

  async start(given: EventFilter): Promise<RedeliveryStarted> {
    // A search's open end is fixed now, so a task resumed later still searches the same range.
    const filter = given.q !== undefined && given.until === undefined ? { ...given, until: new Date().toISOString() } : given;
    const count = countMatching(filter);
    const [matched] = await this.dataSource.query<Matched[]>(count.sql, count.parameters);
    const finished = matched.count === 0;
    const [task] = await this.sql.rows(RECORD_REDELIVERY_TASK, {
      finished,
      accountId: filter.account_id ?? null,
      filter: JSON.stringify(filter),
      total: matched.count,
      upperSeq: matched.upper ?? 0,
    });
    // Unclaimed (no owner, no heartbeat): the worker that takes the job claims it, or a worker's poll does.
    if (!finished) await this.tasks.announce('redelivery', task.id);
    return { count: matched.count, task_id: task.id };
  }

  /** `accountId` scopes it (the portal): another account's task is missing, exactly like an unknown id. */
  async get(taskId: string, accountId?: number): Promise<RedeliveryTaskView> {
    const row = isTaskId(taskId) ? await this.sql.first(REDELIVERY_TASK, { id: taskId, accountId: accountId ?? null }) : null;
    if (!row) throw new DomainError('not_found', `redelivery task ${taskId} does not exist`);
    return viewOf(row);
  }

  async list(limit: number): Promise<{ items: RedeliveryTaskView[] }> {
    const rows = await this.sql.rows(NEWEST_REDELIVERY_TASKS, { limit });
    return { items: rows.map(viewOf) };
  }
}
