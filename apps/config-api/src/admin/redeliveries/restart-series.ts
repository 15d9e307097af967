import type { DeliveryJobData } from '@app/runtime';

/** Rows per UPDATE (and jobs per addBulk) in a bulk redelivery: bounded locks, bounded Redis pipelines. */
export const REDELIVERY_CHUNK = 1000;

/**
 * A new attempt series starting now. series + 1 makes every job of the old series stale (the worker
 * compares the job's pair with the row), and gives the new first job an id never used before, so
 * BullMQ's de-duplication cannot swallow it.
 */
export const RESTART_SERIES = `
  series = events.series + 1, series_attempts = 0, status = 'queued', next_attempt_at = now(),
  last_error = NULL, delivered_at = NULL, updated_at = now()`;

export interface RestartedRow {
  seq: string;
  series: number;
  account_id: number;
}

/** The first step of each restarted event's new series. */
export function redeliveryJobs(rows: readonly RestartedRow[]): DeliveryJobData[] {
  return rows.map((row) => ({ eventSeq: row.seq, accountId: row.account_id, series: row.series, attempt: 0 }));
}
