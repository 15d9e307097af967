/**
 * The event row's lifecycle, spelled once: its statuses, which of them are pending, the step guard a
 * worker's write checks, and the SQL that starts a new attempt series. Every app that reads or moves a
 * row's status takes its SQL from here, so the partial indexes over pending rows (events_pending_due_idx
 * and its companions, whose predicate is `status IN ('queued', 'retrying')`) keep matching the queries.
 */
export const EVENT_STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Statuses a worker still has to act on; everything else is final until an operator redelivers. */
export const PENDING_EVENT_STATUSES: readonly EventStatus[] = ['queued', 'retrying'];
/**
 * Statuses nothing acts on again unless an operator redelivers: only these rows may expire. Listed
 * rather than derived from the pending ones, so a status added later is kept until someone decides.
 */
export const FINAL_EVENT_STATUSES = ['delivered', 'failed', 'filtered', 'no_endpoint'] as const satisfies readonly EventStatus[];
export type FinalEventStatus = (typeof FINAL_EVENT_STATUSES)[number];

/** The status (or a worker's result, which may be no status at all) ends the event: only an operator moves it again. */
export function isFinalStatus(status: string): status is FinalEventStatus {
  return (FINAL_EVENT_STATUSES as readonly string[]).includes(status);
}

/** A worker still has to act on a row in this status. */
export function isPendingStatus(status: string): boolean {
  return (PENDING_EVENT_STATUSES as readonly string[]).includes(status);
}

/**
 * The step guard as a worker checks a loaded row before it calls (atStepSql is the same guard on its
 * write): still pending, at the job's series and number of attempts in that series.
 */
export function isAtStep(row: { status: string; series: number; seriesAttempts: number }, step: { series: number; attempt: number }): boolean {
  return isPendingStatus(row.status) && row.series === step.series && row.seriesAttempts === step.attempt;
}

/** The status of a newly stored event and of a restarted series. */
export const FIRST_EVENT_STATUS: EventStatus = 'queued';

function sqlList(values: readonly string[]): string {
  return `(${values.map((value) => `'${value}'`).join(', ')})`;
}

function column(alias: string | undefined, name: string): string {
  return alias ? `${alias}.${name}` : name;
}

/** `('queued', 'retrying')`: the pending statuses as an SQL list. */
export const PENDING_STATUS_LIST = sqlList(PENDING_EVENT_STATUSES);
/** `('delivered', 'failed', 'filtered', 'no_endpoint')`: the final statuses as an SQL list. */
export const FINAL_STATUS_LIST = sqlList(FINAL_EVENT_STATUSES);

/** The row is pending: a worker still has to act on it. */
export function isPendingSql(alias?: string): string {
  return `${column(alias, 'status')} IN ${PENDING_STATUS_LIST}`;
}

/** The row is pending and its next step is due now: the backlog the workers have not reached. */
export function isDueSql(alias?: string): string {
  return `${isPendingSql(alias)} AND ${column(alias, 'next_attempt_at')} <= now()`;
}

/**
 * The row is pending without a due time. Every writer sets next_attempt_at on pending rows; these are
 * rows written some other way, counted and reconciled as due now so they are not stranded.
 */
export function isUndatedSql(alias?: string): string {
  return `${isPendingSql(alias)} AND ${column(alias, 'next_attempt_at')} IS NULL`;
}

/**
 * The row is not final, which the status CHECK constraints make the same as pending. Written this way
 * where only the primary key may find the row: a query that says `status IN (pending)` lets PostgreSQL
 * read the partial indexes over pending rows instead, and a plan kept for every call (GenericPlanPool)
 * made while the statistics said little was pending would read a whole backlog on each call.
 */
export function isNotFinalSql(alias?: string): string {
  return `${column(alias, 'status')}::text NOT IN ${FINAL_STATUS_LIST}`;
}

/**
 * The step guard of a worker's write: the row is still at the step the job was for (same series, same
 * number of attempts in it) and still pending. A redelivery (series + 1) or a duplicate job that
 * recorded first moves the row on, and the write then changes nothing. The row is found by its key
 * alone (isNotFinalSql).
 */
export function atStepSql(row: string, step: string): string {
  return `${row}.series = ${step}.series AND ${row}.series_attempts = ${step}.series_attempts AND ${isNotFinalSql(row)}`;
}

/** `status, next_attempt_at` values of a newly stored event: queued, due now. */
export const NEW_EVENT_STEP_VALUES = `'${FIRST_EVENT_STATUS}', now()`;

/**
 * SET clause of a new attempt series starting now. series + 1 makes every job of the old series stale
 * (the worker compares the job's pair with the row), and gives the new first job an id never used
 * before, so BullMQ's de-duplication cannot swallow it.
 */
export const RESTART_SERIES = `
  series = events.series + 1, series_attempts = 0, status = '${FIRST_EVENT_STATUS}', next_attempt_at = now(),
  last_error = NULL, delivered_at = NULL, updated_at = now()`;
