/** Rows per UPDATE (and jobs per addBulk) in a bulk redelivery: bounded locks, bounded Redis pipelines. */
export const REDELIVERY_CHUNK = 1000;

/** What a restart (RESTART_SERIES from @app/persistence) returns per row: enough for its first step's job. */
export interface RestartedRow {
  seq: string;
  series: number;
  account_id: number;
}
