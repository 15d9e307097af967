import type { RedeliveryTaskView } from '@app/payloads';
import { defineStatement } from '@app/persistence';

/** The stored row: the view, with its times as the driver reads them. */
export type TaskRow = Omit<RedeliveryTaskView, 'created_at' | 'finished_at'> & { created_at: Date; finished_at: Date | null };

const TASK_COLUMNS = 'id, status, total, done, account_id, filter, created_at, finished_at, error';

interface NewTask {
  /** Nothing matched: the task is recorded done at once. */
  finished: boolean;
  accountId: number | null;
  /** The filter as JSON text. */
  filter: string;
  total: number;
  upperSeq: string | number;
}

export const RECORD_REDELIVERY_TASK = defineStatement<NewTask, { id: string }>(
  'admin-record-redelivery-task',
  'plain',
  (p) => `
  INSERT INTO redelivery_tasks (status, account_id, filter, total, upper_seq, finished_at)
  VALUES (CASE WHEN ${p.finished}::boolean THEN 'done' ELSE 'running' END, ${p.accountId}, ${p.filter}::jsonb, ${p.total}, ${p.upperSeq},
          CASE WHEN ${p.finished}::boolean THEN now() END)
  RETURNING id`,
);

/** `accountId` null for a task of any account. */
export const REDELIVERY_TASK = defineStatement<{ id: string; accountId: number | null }, TaskRow>(
  'admin-redelivery-task',
  'plain',
  (p) => `SELECT ${TASK_COLUMNS} FROM redelivery_tasks WHERE id = ${p.id} AND (${p.accountId}::int IS NULL OR account_id = ${p.accountId})`,
);

export const NEWEST_REDELIVERY_TASKS = defineStatement<{ limit: number }, TaskRow>(
  'admin-redelivery-tasks',
  'plain',
  (p) => `SELECT ${TASK_COLUMNS} FROM redelivery_tasks ORDER BY created_at DESC, id LIMIT ${p.limit}`,
);
