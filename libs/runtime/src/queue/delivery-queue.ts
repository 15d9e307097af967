import type { JobsOptions } from 'bullmq';

/**
 * The BullMQ queue between ingest/config-api (producers) and the delivery worker (only consumer); one
 * queue of this name per shard, each under its own prefix (see DeliveryQueues).
 */
export const DELIVERY_QUEUE = 'deliveries';
export const DELIVERY_JOB_NAME = 'deliver';

/** The primary destination's id (CONTRACT §11): its jobs leave `destinationId` out, so their ids keep their original shape. */
const PRIMARY = 'primary';

/**
 * Jobs carry ids only: the PostgreSQL row is the truth, and secrets never enter Redis. A job is one step
 * of one delivery (an event to one destination): `series` is the delivery's attempt series (0, then +1
 * per manual redelivery) and `attempt` the number of attempts already made in that series; a job whose
 * pair no longer matches the row is stale. `accountId` picks the queue shard, so every step of an
 * event (retries, redeliveries, the reconciler's re-adds) goes to the same shard and keeps one job id
 * space. `destinationId` names the destination; absent: the primary.
 */
export interface DeliveryJobData {
  eventSeq: string;
  accountId: number;
  series: number;
  attempt: number;
  destinationId?: string;
  /** The held delivery sent as its destination's half-open breaker probe (CONTRACT §5): only it may take the probe. */
  probe?: true;
  /** W3C trace context of the step that enqueued this one, only while tracing is on (libs/runtime/src/tracing). */
  traceparent?: string;
}

/** The destination a job is for. */
export function destinationOfStep(step: Pick<DeliveryJobData, 'destinationId'>): string {
  return step.destinationId ?? PRIMARY;
}

/** A step of a delivery, its destination named only when it is not the primary. */
export function deliveryStep(step: { eventSeq: string; accountId: number; destinationId: string; series: number; attempt: number }): DeliveryJobData {
  const data: DeliveryJobData = { eventSeq: step.eventSeq, accountId: step.accountId, series: step.series, attempt: step.attempt };
  if (step.destinationId !== PRIMARY) data.destinationId = step.destinationId;
  return data;
}

/** A new event's first delivery step to one destination: series 0, no attempt made yet. */
export function firstDeliveryStep(eventSeq: string, accountId: number, destinationId: string = PRIMARY): DeliveryJobData {
  return deliveryStep({ eventSeq, accountId, destinationId, series: 0, attempt: 0 });
}

/** The step a delivery is at, as a loaded delivery says (its series and attempts made in it). */
export function deliveryStepData(delivery: { seq: string; accountId: number; destinationId: string; series: number; seriesAttempts: number }): DeliveryJobData {
  return deliveryStep({ eventSeq: delivery.seq, accountId: delivery.accountId, destinationId: delivery.destinationId, series: delivery.series, attempt: delivery.seriesAttempts });
}

/** The step a pending delivery is at, as its row says: the reconciler's, the feeder's and a redelivery's add. */
export function stepOfRow(row: { event_seq: string; account_id: number; destination_id: string; series: number; series_attempts: number }): DeliveryJobData {
  return deliveryStep({ eventSeq: row.event_seq, accountId: row.account_id, destinationId: row.destination_id, series: row.series, attempt: row.series_attempts });
}

/** The retry after one more attempt in the same series. */
export function retryStep(step: DeliveryJobData): DeliveryJobData {
  const next: DeliveryJobData = { eventSeq: step.eventSeq, accountId: step.accountId, series: step.series, attempt: step.attempt + 1 };
  if (step.destinationId !== undefined) next.destinationId = step.destinationId;
  return next;
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
