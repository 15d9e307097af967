import { defineStatement, type EventStatus, PRIMARY_DESTINATION_ID } from '@app/persistence';

/** One account's events since a time (null: all), as (account_id, seq) finds them, each with its primary delivery. */
const ACCOUNT_EVENTS = (p: { accountId: string; since: string }) => `
    FROM events e
    JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = '${PRIMARY_DESTINATION_ID}'
   WHERE e.account_id = ${p.accountId}::int AND (${p.since}::timestamptz IS NULL OR e.created_at >= ${p.since}::timestamptz)`;

interface AccountWindow {
  accountId: number;
  since: Date | null;
}

/** One account's events by their primary delivery's status (GET /admin/v1/stats?account_id=). */
export const ACCOUNT_STATUS_COUNTS = defineStatement<AccountWindow, { status: EventStatus; count: number }>(
  'admin-stats-account-counts',
  'plain',
  (p) => `SELECT d.status, count(*)::int AS count ${ACCOUNT_EVENTS(p)} GROUP BY d.status`,
);

/**
 * The latency (accepted → delivered) percentiles of one account's delivered events: percentile_cont
 * interpolates between neighbours, like the Prometheus-style summaries operators know.
 */
export const ACCOUNT_LATENCY = defineStatement<AccountWindow, { count: number; p50: number | null; p95: number | null; p99: number | null }>(
  'admin-stats-account-latency',
  'plain',
  (p) => `
  SELECT count(*)::int AS count,
         percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
         percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
    FROM (SELECT (EXTRACT(EPOCH FROM d.delivered_at - e.created_at) * 1000)::float8 AS latency_ms
          ${ACCOUNT_EVENTS(p)} AND d.status = 'delivered' AND d.delivered_at IS NOT NULL) AS delivered`,
);
