import type { DataSource, EntityManager } from 'typeorm';
import { type DeliveryJobData, pendingDestinationStep, pendingRowStep } from '@app/runtime';
import { isPendingSql } from '../events/event-lifecycle';
import { PRIMARY_DESTINATION_ID } from '../entities/destination.entity';

/** What resuming needs of the queue: DeliveryQueues (config-api's producer) has it. */
export interface DeliveryEnqueuer {
  addBulk(steps: readonly DeliveryJobData[]): Promise<void>;
}

/** Pending deliveries re-enqueued per statement and per queue call while resuming. */
const RESUME_BATCH = 1000;

/**
 * A manual redelivery of one (event, destination) delivery, aliased `d`: a new series from its first
 * attempt, as RESTART_SERIES for events. Single and bulk redeliveries use it.
 */
export const RESTART_DESTINATION_SERIES = `
  series = d.series + 1, series_attempts = 0, status = 'queued', next_attempt_at = now(),
  last_error = NULL, delivered_at = NULL, updated_at = now()`;

/** What a restart of destination deliveries returns per row: enough for its first step's job (pendingDestinationStep). */
export const RESTARTED_DESTINATION_COLUMNS = 'd.event_seq::text AS event_seq, d.account_id, d.destination_id, d.series, d.series_attempts';

/** A destination delivery's row as RESTARTED_DESTINATION_COLUMNS reads it (restart and resume): the step its job is at. */
export interface DestinationStepRow {
  event_seq: string;
  account_id: number;
  destination_id: string;
  series: number;
  series_attempts: number;
}

/** The last_error of a deleted destination's deliveries (CONTRACT §11); the worker writes the same. */
export const DESTINATION_DELETED_ERROR = 'destination deleted';

const RESUME_PRIMARY_SQL = `UPDATE callback_settings SET paused = false, version = version + 1, updated_at = now() WHERE account_id = $1 RETURNING 1`;
const RESUME_DESTINATION_SQL = `
  UPDATE destinations SET paused = false, version = version + 1, updated_at = now()
   WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING 1`;

/** The next batch of pending events of the account after `$2`, in accepted order, each given a due time (so the reconciler would also find it). */
const NEXT_PRIMARY_SQL = `
  UPDATE events e SET next_attempt_at = now()
    FROM (SELECT seq FROM events WHERE account_id = $1 AND ${isPendingSql()} AND seq > $2 ORDER BY seq LIMIT $3) picked
   WHERE e.seq = picked.seq
  RETURNING e.seq::text AS seq, e.account_id, e.series, e.series_attempts`;

const NEXT_DESTINATION_SQL = `
  UPDATE destination_deliveries d SET next_attempt_at = now()
    FROM (SELECT event_seq FROM destination_deliveries
           WHERE destination_id = $1 AND ${isPendingSql()} AND event_seq > $2 ORDER BY event_seq LIMIT $3) picked
   WHERE d.event_seq = picked.event_seq AND d.destination_id = $1
  RETURNING ${RESTARTED_DESTINATION_COLUMNS}`;

type PendingEventRow = { seq: string; account_id: number; series: number; series_attempts: number };

function bySeq<T>(seqOf: (row: T) => string): (a: T, b: T) => number {
  return (a, b) => (BigInt(seqOf(a)) < BigInt(seqOf(b)) ? -1 : 1);
}

/**
 * Resumes a paused destination (CONTRACT §11): paused=false, then every pending delivery of it (for
 * `primary`: the account's pending events) is enqueued again in accepted order, so they go in that
 * order. Paused deliveries wait without a job, so this is what sends them; rows that still have a job
 * get the same job id, which the queue ignores. Answers how many were enqueued, or null when there is
 * no such destination. `announce` (publish the account on the settings channel) runs between the
 * update and the enqueueing: the workers' cache of the primary's pause must drop it before the jobs
 * arrive (a job that still saw it paused parks its event again, which the reconciler then re-adds).
 */
export async function resumeDestination(
  dataSource: DataSource,
  queues: DeliveryEnqueuer,
  accountId: number,
  destinationId: string,
  announce: () => Promise<void> = () => Promise.resolve(),
): Promise<number | null> {
  const primary = destinationId === PRIMARY_DESTINATION_ID;
  const [, resumed] = await dataSource.query<[unknown[], number]>(primary ? RESUME_PRIMARY_SQL : RESUME_DESTINATION_SQL, primary ? [accountId] : [destinationId, accountId]);
  if (!resumed) return null;
  await announce();
  let after = '-1';
  let total = 0;
  for (;;) {
    let steps: DeliveryJobData[];
    if (primary) {
      const [rows] = await dataSource.query<[PendingEventRow[], number]>(NEXT_PRIMARY_SQL, [accountId, after, RESUME_BATCH]);
      rows.sort(bySeq((row) => row.seq));
      steps = rows.map(pendingRowStep);
    } else {
      const [rows] = await dataSource.query<[DestinationStepRow[], number]>(NEXT_DESTINATION_SQL, [destinationId, after, RESUME_BATCH]);
      rows.sort(bySeq((row) => row.event_seq));
      steps = rows.map(pendingDestinationStep);
    }
    if (steps.length === 0) break;
    await queues.addBulk(steps);
    total += steps.length;
    after = steps[steps.length - 1].eventSeq;
    if (steps.length < RESUME_BATCH) break;
  }
  return total;
}

/**
 * Ends every pending delivery of a destination that was just deleted, `failed` with last_error
 * `destination deleted` (their jobs, if any, then find them ended). Run it in the transaction that sets
 * deleted_at, or after it; answers how many ended.
 */
export async function failDeletedDestinationDeliveries(manager: DataSource | EntityManager, destinationId: string): Promise<number> {
  const [, count] = await manager.query<[unknown[], number]>(
    `UPDATE destination_deliveries
        SET status = 'failed', next_attempt_at = NULL, last_error = $2, updated_at = now()
      WHERE destination_id = $1 AND ${isPendingSql()}`,
    [destinationId, DESTINATION_DELETED_ERROR],
  );
  return count;
}

