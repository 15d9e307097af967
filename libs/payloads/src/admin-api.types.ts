import type { DestinationDeliveryView, DestinationView } from './destinations/destination.types';
import type { Permissions } from './actions';

/**
 * The admin API's answers (CONTRACT §3 and the console's additions), declared once for the server that
 * sends them and the operators' console that reads them. The console bundles this file for the browser:
 * it holds types and plain value lists only, and imports nothing but types (nothing Node or Nest).
 */

/** The same lists as the database's (libs/persistence entities); a config-api unit test keeps them equal. */
export const EVENT_STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'expired', 'filtered', 'no_endpoint'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const BOT_WEBHOOK_TYPES = ['message_trigger', 'task_push'] as const;
export type BotWebhookType = (typeof BOT_WEBHOOK_TYPES)[number];
export const BOT_CALL_OUTCOMES = ['ok', 'failed', 'timeout', 'invalid_answer', 'refused', 'not_found'] as const;
export type BotCallOutcome = (typeof BOT_CALL_OUTCOMES)[number];
export const SERIES_BUCKETS = ['1m', '1h', '1d'] as const;
export type SeriesBucket = (typeof SERIES_BUCKETS)[number];
/** CONTRACT §9: `subject` calls one event at a time per subject, in accepted order. Same list as the database's CHECK. */
export const DELIVERY_ORDERINGS = ['none', 'subject'] as const;
export type DeliveryOrdering = (typeof DELIVERY_ORDERINGS)[number];
/** Bounds of `max_per_second` (the database's CHECK); null means no pace but the concurrency caps. */
export const MAX_PER_SECOND_MIN = 1;
export const MAX_PER_SECOND_MAX = 10_000;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface EventListItem {
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  attempts: number;
  created_at: string;
  delivered_at: string | null;
  last_error: string | null;
  /** Its message and attempt bodies were cleared by an erasure (CONTRACT §12). */
  erased: boolean;
}

/** A whole list in one answer, without pages (bot webhooks of an account, troubled endpoints, redelivery tasks). */
export interface ItemList<T> {
  items: T[];
}

export type EventPage = Page<EventListItem>;

export interface AttemptView {
  attempt: number;
  series: number;
  started_at: string;
  duration_ms: number;
  url: string;
  request_headers: Record<string, string>;
  request_body: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  error: string | null;
}

/** One event in full. `attempts` is the attempt log (CONTRACT §3); the counter is `attempt_count`. */
export interface EventDetail {
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  series: number;
  attempt_count: number;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
  last_error: string | null;
  /** null once erased (CONTRACT §12). */
  message: Record<string, unknown> | null;
  erased: boolean;
  /** The primary's attempts (its delivery's fields are the event's own). */
  attempts: AttemptView[];
  /** Every destination that took the event, the primary first (`destination_id` "primary"), CONTRACT §11. */
  deliveries: DestinationDeliveryView<AttemptView>[];
}

/** The filters the event list and the bulk redelivery by filter share; a redelivery task shows its own. */
export interface EventFilter {
  account_id?: number;
  action?: string;
  status?: EventStatus;
  since?: string;
  until?: string;
  q?: string;
}

/** `POST /admin/v1/events/:event_id/redeliver`: a new attempt series has started. */
export interface EventRedelivered {
  event_id: string;
  status: 'queued';
  series: number;
}

/** A bulk redelivery, started as a task whose progress `GET /admin/v1/redeliveries/:task_id` shows. */
export interface RedeliveryStarted {
  count: number;
  task_id: string;
}

export type RedeliveryTaskStatus = 'running' | 'done' | 'failed';

export interface RedeliveryTaskView {
  id: string;
  status: RedeliveryTaskStatus;
  total: number;
  done: number;
  account_id: number | null;
  filter: EventFilter;
  created_at: string;
  finished_at: string | null;
  error: string | null;
}

/**
 * `GET /admin/v1/stats`: `counts` has every status (zeros included) and `total`; `delivery_latency_ms`
 * covers delivered events (created_at → delivered_at) with `count` of them and percentiles rounded to
 * whole milliseconds, each null when no event was delivered. Filters echo back as given.
 */
export interface EventStats {
  account_id: number | null;
  since: string | null;
  total: number;
  counts: Record<EventStatus, number>;
  delivery_latency_ms: LatencySummary;
}

/** Delivered events measured (`count`) and their latency percentiles in ms, null when there are none. */
export interface LatencySummary {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface SeriesPoint {
  t: string;
  delivered: number;
  failed: number;
  attempts: number;
  failed_attempts: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface StatsSeries {
  bucket: SeriesBucket;
  points: SeriesPoint[];
}

/** An endpoint's circuit breaker: closed delivers; open waits until `retry_at`; half_open has one probe out. */
export interface BreakerState {
  state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  opened_at: string | null;
  retry_at: string | null;
  last_error: string | null;
}

/** An endpoint's delivery options (CONTRACT §9), as the Open API, the admin API and the console show them. */
export interface DeliveryOptions {
  ordering: DeliveryOrdering;
  max_per_second: number | null;
}

/** The body of `set_delivery_options` and `PUT /admin/v1/accounts/:id/delivery-options`: fields not sent keep their value. */
export type DeliveryOptionsChange = Partial<DeliveryOptions>;

export interface CreatedAccount {
  id: number;
  email: string;
  name: string | null;
  open_api_token: string;
  signing_secret: string;
}

export interface AccountView {
  id: number;
  email: string;
  name: string | null;
  created_at: string;
  push_url: string | null;
  push_content_type: string;
  permissions: Permissions;
  ordering: DeliveryOrdering;
  max_per_second: number | null;
  /** Keys whose values the stored copies hold as "[redacted]" once an event ends (CONTRACT §12). */
  redaction_fields: string[];
  previous_secret_expires_at: string | null;
  /** When the worker stopped calling push_url because every attempt failed for ENDPOINT_DISABLE_AFTER; null while enabled. */
  disabled_at: string | null;
  disabled_reason: string | null;
  endpoint: BreakerState | null;
  /** The endpoint's lane: due events not yet called, and the pace now allowed (calls a second; null: no pace). */
  lane: EndpointLane;
  /** The primary first, then the extra destinations (CONTRACT §11). */
  destinations: DestinationView[];
}

export interface EndpointLane {
  waiting: number;
  pace_per_second: number | null;
}

export interface RotatedSecret {
  signing_secret: string;
  previous_secret_expires_at: string;
}

/** `POST /admin/v1/accounts/:id/rotate-token`: the new Open API token, shown once; the old one is refused from now on. */
export interface RotatedToken {
  open_api_token: string;
}

/** `GET /admin/v1/endpoints`: an endpoint whose breaker is not closed, or that the worker disabled. */
export interface EndpointItem {
  account_id: number;
  email: string;
  push_url: string;
  endpoint: string;
  breaker: BreakerState['state'];
  consecutive_failures: number;
  retry_at: string | null;
  last_error: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

/** `GET /admin/v1/queue`: the delivery queue summed over its shards. */
export interface QueueState {
  /** Ready to run now (BullMQ's wait and prioritized lists). */
  waiting: number;
  active: number;
  /** Scheduled for later (retries), including any already due that no worker has promoted yet. */
  delayed: number;
  failed: number;
  /** When the oldest job that is due and not yet taken became due; null when none. */
  oldest_waiting_at: string | null;
  oldest_waiting_age_seconds: number | null;
}

/** A bot webhook as operators see it: the key is a secret and is never shown, not even on creation. */
export interface BotWebhookView {
  id: number;
  account_id: number;
  name: string;
  type: BotWebhookType;
  url: string;
  timeout_ms: number;
  created_at: string;
}

/** One recorded bot call. The key is never stored; the task-push `sign` is stored redacted. */
export interface BotCallView {
  id: string;
  account_id: number;
  bot_webhook_id: number | null;
  type: BotWebhookType;
  integration_name: string;
  url: string | null;
  request_body: string | null;
  response_status: number | null;
  response_body: string | null;
  answer: unknown;
  outcome: BotCallOutcome;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

/** One entry of the audit log (CONTRACT §15). */
export interface AuditEntryView {
  id: string;
  at: string;
  actor: string;
  role: 'viewer' | 'operator' | 'admin' | null;
  via: 'token' | 'oidc' | 'open_api' | 'portal';
  action: string;
  account_id: number | null;
  target: string | null;
  status: number;
  ip: string | null;
  request_id: string | null;
}

/** GET /admin/v1/session: who the console is signed in as. */
export interface AdminSessionView {
  actor: string;
  role: 'viewer' | 'operator' | 'admin';
  via: 'token' | 'oidc';
  /** Sent back as `x-csrf-token` on every write made with the session cookie; null for bearer tokens. */
  csrf_token: string | null;
}
