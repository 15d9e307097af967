/** Shapes of the admin API answers the console reads (CONTRACT §3 and the console additions). */

export const EVENT_STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const BOT_WEBHOOK_TYPES = ['message_trigger', 'task_push'] as const;
export const BOT_CALL_OUTCOMES = ['ok', 'failed', 'timeout', 'invalid_answer', 'refused', 'not_found'] as const;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface EventItem {
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  attempts: number;
  created_at: string;
  delivered_at: string | null;
  last_error: string | null;
}

export interface Attempt {
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
  message: unknown;
  attempts: Attempt[];
}

export interface BreakerState {
  state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  opened_at: string | null;
  retry_at: string | null;
  last_error: string | null;
}

export interface Account {
  id: number;
  email: string;
  name: string | null;
  created_at: string;
  push_url: string | null;
  push_content_type: string;
  permissions: Record<string, boolean>;
  previous_secret_expires_at: string | null;
  endpoint: BreakerState | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export interface CreatedAccount {
  id: number;
  email: string;
  name: string | null;
  open_api_token: string;
  signing_secret: string;
}

export interface BotWebhook {
  id: number;
  account_id: number;
  name: string;
  type: string;
  url: string;
  timeout_ms: number;
  created_at: string;
}

export interface BotCall {
  id: string;
  account_id: number;
  bot_webhook_id: number | null;
  type: string;
  integration_name: string;
  url: string | null;
  request_body: string | null;
  response_status: number | null;
  response_body: string | null;
  answer: unknown;
  outcome: string;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export interface Stats {
  total: number;
  counts: Record<string, number>;
  delivery_latency_ms: { count: number; p50: number | null; p95: number | null; p99: number | null };
}

export type Bucket = '1m' | '1h' | '1d';

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

export interface Series {
  bucket: Bucket;
  points: SeriesPoint[];
}

export interface QueueState {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldest_waiting_at: string | null;
  oldest_waiting_age_seconds: number | null;
}

export interface TroubledEndpoint {
  account_id: number;
  email: string;
  push_url: string;
  endpoint: string;
  breaker: 'open' | 'half_open' | 'closed';
  consecutive_failures: number;
  retry_at: string | null;
  last_error: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export interface RedeliveryStarted {
  count: number;
  task_id: string;
}

export interface RedeliveryTask {
  id: string;
  status: 'running' | 'done' | 'failed';
  total: number;
  done: number;
  account_id: number | null;
  filter: Record<string, unknown>;
  created_at: string;
  finished_at: string | null;
  error: string | null;
}
