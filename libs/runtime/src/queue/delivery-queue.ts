/** The BullMQ queue between ingest/config-api (producers) and the delivery worker (only consumer). */
export const DELIVERY_QUEUE = 'deliveries';

/** Jobs carry ids only: the PostgreSQL row is the truth, and secrets never enter Redis. */
export interface DeliveryJobData {
  eventSeq: string;
  series: number;
}

/**
 * Deterministic per attempt series, so enqueueing the same event twice (ingest racing the
 * reconciler) is a no-op while a manual redelivery (a new series) is never swallowed.
 */
export function deliveryJobId(eventSeq: string, series: number): string {
  return `e${eventSeq}-s${series}`;
}
