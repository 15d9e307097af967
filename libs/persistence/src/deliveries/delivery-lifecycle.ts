/**
 * A delivery's lifecycle, spelled once: its statuses, which of them are pending, and the step guard a
 * worker's write checks. The status of an event in the admin API, the portal and the stats is the status
 * of its primary delivery (CONTRACT §3); every destination's delivery moves through the same statuses.
 */
export const EVENT_STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'expired', 'filtered', 'no_endpoint'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * Statuses a worker still has to act on. A pending delivery is `queued` exactly while no attempt of its
 * series was recorded (series_attempts 0) and `retrying` after: the recorder keeps that so, and the books
 * read a delivery's previous status from its step alone.
 */
export const PENDING_EVENT_STATUSES = ['queued', 'retrying'] as const satisfies readonly EventStatus[];

/** Statuses nothing acts on again unless an operator redelivers. */
export const FINAL_EVENT_STATUSES = ['delivered', 'failed', 'expired', 'filtered', 'no_endpoint'] as const satisfies readonly EventStatus[];
export type FinalEventStatus = (typeof FINAL_EVENT_STATUSES)[number];

export function isFinalStatus(status: string): status is FinalEventStatus {
  return (FINAL_EVENT_STATUSES as readonly string[]).includes(status);
}

export function isPendingStatus(status: string): boolean {
  return (PENDING_EVENT_STATUSES as readonly string[]).includes(status);
}

/** The status of a pending delivery at this step of its series. */
export function pendingStatusAt(seriesAttempts: number): 'queued' | 'retrying' {
  return seriesAttempts === 0 ? 'queued' : 'retrying';
}

/**
 * The step guard as a worker checks a loaded delivery before it calls (the record statement checks the
 * same on its write): still pending, at the job's series and number of attempts in that series.
 */
export function isAtStep(row: { status: string; series: number; seriesAttempts: number }, step: { series: number; attempt: number }): boolean {
  return isPendingStatus(row.status) && row.series === step.series && row.seriesAttempts === step.attempt;
}

function sqlList(values: readonly string[]): string {
  return `(${values.map((value) => `'${value}'`).join(', ')})`;
}

/** `('delivered', 'failed', …)`: the final statuses as an SQL list, for the statements of this folder. */
export const FINAL_STATUS_LIST = sqlList(FINAL_EVENT_STATUSES);
/** `('queued', 'retrying')`. */
export const PENDING_STATUS_LIST = sqlList(PENDING_EVENT_STATUSES);

/** The primary destination's id wherever deliveries and destinations are named (CONTRACT §11). */
export const PRIMARY_DESTINATION_ID = 'primary';

/** last_error of deliveries that never had a target or a permission (decided when ingest stores the event). */
export const NO_ENDPOINT_ERROR = 'no push_url is set';

/** The last_error of a deleted destination's deliveries (CONTRACT §11). */
export const DESTINATION_DELETED_ERROR = 'destination deleted';

/** Why a delivery waits without a job: its destination is paused, or its breaker is open. */
export type HoldReason = 'paused' | 'breaker';
