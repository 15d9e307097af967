import { counter, histogram } from '@app/runtime';

/** HTTP attempts by result: `delivered`, or the failure class (retryable, throttled, permanent). */
export const deliveryAttempts = counter('callback_delivery_attempts_total', 'Callback HTTP attempts by outcome', ['outcome']);

/** Jobs that ended without an HTTP call, by reason (filtered, no_endpoint, stale, endpoint_disabled, unencodable, unsignable) and deferrals (busy, breaker_open). */
export const deliveryJobsWithoutCall = counter(
  'callback_delivery_jobs_without_call_total',
  'Delivery jobs that made no HTTP call, by reason',
  ['reason'],
);

/**
 * Ordering "subject": what the end of an event did for the next one of its subject (`promoted`: its held
 * job left the delayed set; `not_delayed`: its job was not in the delayed set, a mark was left; `none`:
 * no later event pending), and `self`: held jobs that found a mark and promoted themselves.
 */
export const subjectReleases = counter('callback_subject_releases_total', 'Ordering "subject": releases of the next held event of a subject, by outcome', ['outcome']);

/** Final delivery statuses reached by the worker (delivered, failed, expired, no_endpoint). */
export const deliveryEventsSettled = counter('callback_delivery_events_settled_total', 'Events reaching a final status', ['status']);

export const deliveryAttemptDuration = histogram(
  'callback_delivery_attempt_duration_seconds',
  'Duration of one callback HTTP attempt',
  ['outcome'],
  [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
);

/** From the event being stored to its successful delivery, retries included. */
export const deliveryLatency = histogram(
  'callback_delivery_latency_seconds',
  'Time from event creation to successful delivery',
  [],
  [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
);

/** Jobs put back because PostgreSQL was unavailable. */
export const deliveryDatabaseWaits = counter('callback_delivery_database_waits_total', 'Delivery jobs postponed because PostgreSQL was unavailable');

export const breakerOpens = counter('callback_delivery_breaker_opens_total', 'Times an endpoint circuit breaker opened');

export const reconcilerRequeued = counter('callback_delivery_reconciler_requeued_total', 'Pending events re-enqueued by the reconciler');

/** Held deliveries sent back to the queue (a resume, a breaker probe or close, a bulk redelivery's re-queuing). */
export const deliveriesReleased = counter('callback_delivery_held_released_total', 'Held deliveries sent back to the queue by the feeder');
