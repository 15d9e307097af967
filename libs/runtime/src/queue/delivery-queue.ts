import type { JobsOptions } from 'bullmq';

/**
 * The BullMQ queue between ingest/config-api (producers) and the delivery worker (only consumer); one
 * queue of this name per shard, each under its own prefix (see DeliveryQueues).
 */
export const DELIVERY_QUEUE = 'deliveries';
export const DELIVERY_JOB_NAME = 'deliver';

/**
 * Jobs carry ids only: the PostgreSQL row is the truth, and secrets never enter Redis.
 * `series` is the event's attempt series (0, then +1 per manual redelivery) and `attempt` the number
 * of attempts already made in that series; a job whose pair no longer matches the row is stale.
 * `accountId` picks the queue shard, so every step of an event (retries, redeliveries, the
 * reconciler's re-adds) goes to the same shard and keeps one job id space.
 * `destinationId` names the extra destination (CONTRACT §11) whose delivery of the event this step is
 * for (its destination_deliveries row keeps series and attempts); absent: the primary (the event row).
 */
export interface DeliveryJobData {
  eventSeq: string;
  accountId: number;
  series: number;
  attempt: number;
  destinationId?: string;
  /** W3C trace context of the step that enqueued this one, only while tracing is on (libs/runtime/src/tracing). */
  traceparent?: string;
}

/** A new event's first delivery step: series 0, no attempt made yet. */
export function firstDeliveryStep(eventSeq: string, accountId: number): DeliveryJobData {
  return { eventSeq, accountId, series: 0, attempt: 0 };
}

/** The first step of a series an operator's redelivery just started (the row's new series). */
export function restartedSeriesStep(row: { seq: string; account_id: number; series: number }): DeliveryJobData {
  return { eventSeq: row.seq, accountId: row.account_id, series: row.series, attempt: 0 };
}

/** The step a pending row is at, as the row says (series and attempts made in it): the reconciler's re-add. */
export function pendingRowStep(row: { seq: string; account_id: number; series: number; series_attempts: number }): DeliveryJobData {
  return { eventSeq: row.seq, accountId: row.account_id, series: row.series, attempt: row.series_attempts };
}

/** The retry after one more attempt in the same series. */
export function retryStep(step: Pick<DeliveryJobData, 'eventSeq' | 'accountId' | 'series' | 'attempt' | 'destinationId'>): DeliveryJobData {
  const next: DeliveryJobData = { eventSeq: step.eventSeq, accountId: step.accountId, series: step.series, attempt: step.attempt + 1 };
  if (step.destinationId !== undefined) next.destinationId = step.destinationId;
  return next;
}

/** A new event's first delivery step to one of the account's extra destinations. */
export function firstDestinationStep(eventSeq: string, accountId: number, destinationId: string): DeliveryJobData {
  return { eventSeq, accountId, series: 0, attempt: 0, destinationId };
}

/** The step a pending destination delivery is at, as its row says: the reconciler's and resume's re-add. */
export function pendingDestinationStep(row: {
  event_seq: string;
  account_id: number;
  destination_id: string;
  series: number;
  series_attempts: number;
}): DeliveryJobData {
  return { eventSeq: row.event_seq, accountId: row.account_id, series: row.series, attempt: row.series_attempts, destinationId: row.destination_id };
}

/**
 * Deterministic per (event, destination, series, attempt): enqueueing the same step twice (ingest
 * racing the reconciler) is a no-op in BullMQ, while a retry or a manual redelivery always gets a new
 * id. The primary's ids keep their original shape, `e<seq>-s<series>-a<attempt>`.
 */
export function deliveryJobId(data: Pick<DeliveryJobData, 'eventSeq' | 'series' | 'attempt' | 'destinationId'>): string {
  const destination = data.destinationId === undefined ? '' : `-d${data.destinationId}`;
  return `e${data.eventSeq}${destination}-s${data.series}-a${data.attempt}`;
}

/** BullMQ's largest priority. */
export const MAX_JOB_PRIORITY = 2 ** 21 - 1;

/**
 * Finished jobs are removed at once: PostgreSQL keeps the history, and a removed id can be enqueued again.
 * `priority` 0 is BullMQ's plain FIFO list, served first; higher numbers wait in its prioritized set,
 * lowest first (see DeliveryQueues: an account's backlog beyond its first jobs is ranked there).
 */
export function deliveryJob(data: DeliveryJobData, delayMs = 0, priority = 0): { name: string; data: DeliveryJobData; opts: JobsOptions } {
  const opts: JobsOptions = { jobId: deliveryJobId(data), delay: Math.max(0, Math.round(delayMs)), removeOnComplete: true, removeOnFail: true };
  if (priority > 0) opts.priority = Math.min(MAX_JOB_PRIORITY, Math.round(priority));
  return { name: DELIVERY_JOB_NAME, data, opts };
}
