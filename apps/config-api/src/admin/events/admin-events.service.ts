import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EVENT_STATUSES, type EventStatus, timeWindowedSelect } from '@app/persistence';
import { ApiError } from '@app/runtime';
import { DEFAULT_PAGE_SIZE, type ListEventsQueryDto, type StatsQueryDto } from './admin-events.dto';
import { decodeCursor, encodeCursor } from './event-cursor';
import { addEventFilter, Conditions } from './event-filter';
import { timeRange } from './timestamp';

export interface EventListItem {
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  attempts: number;
  created_at: string;
  delivered_at: string | null;
  last_error: string | null;
}

export interface EventPage {
  items: EventListItem[];
  next_cursor: string | null;
}

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
  message: Record<string, unknown>;
  attempts: AttemptView[];
}

/**
 * `GET /admin/v1/stats`: `counts` has every status (zeros included) and `total`; `delivery_latency_ms`
 * covers delivered events (created_at → delivered_at) with `count` of them and continuous percentiles
 * rounded to whole milliseconds, each null when no event was delivered. Filters echo back as given.
 */
export interface EventStats {
  account_id: number | null;
  since: string | null;
  total: number;
  counts: Record<EventStatus, number>;
  delivery_latency_ms: { count: number; p50: number | null; p95: number | null; p99: number | null };
}

interface EventRow {
  seq: string;
  event_id: string;
  account_id: number;
  action: string;
  status: EventStatus;
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  last_error: string | null;
}

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

@Injectable()
export class AdminEventsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Newest first by `seq`; each filter is served by an index (see addEventFilter). One extra row is
   * read to know whether another page exists.
   */
  async list(query: ListEventsQueryDto): Promise<EventPage> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const conditions = new Conditions();
    addEventFilter(conditions, query);
    if (query.cursor !== undefined) conditions.add((p) => `seq < ${p}::bigint`, decodeCursor(query.cursor));
    const where = conditions.where();
    const limitPlaceholder = conditions.next(limit + 1);
    // since/until become a seq range too, so only the partitions of that time are read (see timeWindowedSelect).
    const { since, until } = timeRange(query.since, query.until);
    const sql = timeWindowedSelect(
      (extra) => `SELECT seq::text AS seq, event_id, account_id, action, status, attempts, created_at, delivered_at, last_error
                    FROM events ${where ? `${where} AND` : 'WHERE'} ${extra}`,
      (value) => conditions.next(value),
      limitPlaceholder,
      since,
      until,
    );
    const rows = await this.dataSource.query<EventRow[]>(sql, conditions.parameters);
    const page = rows.slice(0, limit);
    return {
      items: page.map((row) => ({
        event_id: row.event_id,
        account_id: row.account_id,
        action: row.action,
        status: row.status,
        attempts: row.attempts,
        created_at: row.created_at.toISOString(),
        delivered_at: iso(row.delivered_at),
        last_error: row.last_error,
      })),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null,
    };
  }

  async detail(eventId: string): Promise<EventDetail> {
    const [event] = await this.dataSource.query<
      (EventRow & { series: number; message: Record<string, unknown>; updated_at: Date; next_attempt_at: Date | null })[]
    >(
      `SELECT seq::text AS seq, event_id, account_id, action, message, status, attempts, series, created_at, updated_at,
              delivered_at, next_attempt_at, last_error
         FROM events
        -- event_keys gives the seq, so the lookup prunes to one partition instead of probing each day's index.
        WHERE seq = (SELECT event_seq FROM event_keys WHERE event_id = $1) AND event_id = $1`,
      [eventId],
    );
    if (!event) throw new ApiError(404, 'not_found', `event ${eventId} does not exist`);
    const attempts = await this.dataSource.query<(Omit<AttemptView, 'started_at'> & { started_at: Date })[]>(
      `SELECT attempt, series, started_at, duration_ms, url, request_headers, request_body, response_status,
              response_headers, response_body, error
         FROM delivery_attempts
        WHERE event_seq = $1
        ORDER BY attempt, id`,
      [event.seq],
    );
    return {
      event_id: event.event_id,
      account_id: event.account_id,
      action: event.action,
      status: event.status,
      series: event.series,
      attempt_count: event.attempts,
      created_at: event.created_at.toISOString(),
      updated_at: event.updated_at.toISOString(),
      delivered_at: iso(event.delivered_at),
      next_attempt_at: iso(event.next_attempt_at),
      last_error: event.last_error,
      message: event.message,
      attempts: attempts.map((attempt) => ({ ...attempt, started_at: attempt.started_at.toISOString() })),
    };
  }

  async stats(query: StatsQueryDto): Promise<EventStats> {
    const { since } = timeRange(query.since, undefined);
    if (query.account_id !== undefined) await this.requireAccount(query.account_id);
    const conditions = new Conditions();
    if (query.account_id !== undefined) conditions.add((p) => `account_id = ${p}`, query.account_id);
    if (since) conditions.add((p) => `created_at >= ${p}`, since);
    const where = conditions.where();
    const latencyWhere = `${where ? `${where} AND` : 'WHERE'} status = 'delivered' AND delivered_at IS NOT NULL`;
    // percentile_cont interpolates between neighbours, like Prometheus-style summaries operators know.
    const [countRows, [latency]] = await Promise.all([
      this.dataSource.query<{ status: EventStatus; count: number }[]>(
        `SELECT status, count(*)::int AS count FROM events ${where} GROUP BY status`,
        conditions.parameters,
      ),
      this.dataSource.query<{ count: number; p50: number | null; p95: number | null; p99: number | null }[]>(
        `SELECT count(*)::int AS count,
                percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
           FROM (SELECT (EXTRACT(EPOCH FROM delivered_at - created_at) * 1000)::float8 AS latency_ms
                   FROM events ${latencyWhere}) AS delivered`,
        conditions.parameters,
      ),
    ]);
    const counts = Object.fromEntries(EVENT_STATUSES.map((status) => [status, 0])) as Record<EventStatus, number>;
    for (const row of countRows) counts[row.status] = row.count;
    const round = (value: number | null): number | null => (value === null ? null : Math.round(value));
    return {
      account_id: query.account_id ?? null,
      since: since ? since.toISOString() : null,
      total: countRows.reduce((sum, row) => sum + row.count, 0),
      counts,
      delivery_latency_ms: { count: latency.count, p50: round(latency.p50), p95: round(latency.p95), p99: round(latency.p99) },
    };
  }

  async requireAccount(accountId: number): Promise<void> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
    if (rows.length === 0) throw new ApiError(404, 'not_found', `account ${accountId} does not exist`);
  }
}
