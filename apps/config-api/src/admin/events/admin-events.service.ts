import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type AttemptView, type EventDetail, type EventPage, PRIMARY_DESTINATION_ID } from '@app/payloads';
import { type EventStatus, timeWindowedSelect } from '@app/persistence';
import { ApiError, checkingQuery } from '@app/runtime';
import { DEFAULT_PAGE_SIZE, type ListEventsQueryDto } from './admin-events.dto';
import { decodeCursor, encodeCursor } from './event-cursor';
import { addEventFilter } from './event-filter';
import { Conditions } from '../sql-conditions';
import { timeRange } from '../timestamp';

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
  erased: boolean;
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
    checkingQuery(() => addEventFilter(conditions, query));
    if (query.cursor !== undefined) conditions.add((p) => `seq < ${p}::bigint`, decodeCursor(query.cursor));
    const where = conditions.where();
    const limitPlaceholder = conditions.next(limit + 1);
    // since/until become a seq range too, so only the partitions of that time are read (see timeWindowedSelect).
    const { since, until } = checkingQuery(() => timeRange(query.since, query.until));
    const sql = timeWindowedSelect(
      (extra) => `SELECT seq::text AS seq, event_id, account_id, action, status, attempts, created_at, delivered_at, last_error, erased
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
        erased: row.erased,
      })),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null,
    };
  }

  /** `accountId` scopes the lookup (the portal): another account's event is missing, exactly like an unknown id. */
  async detail(eventId: string, accountId?: number): Promise<EventDetail> {
    const [event] = await this.dataSource.query<
      (EventRow & { series: number; message: Record<string, unknown> | null; updated_at: Date; next_attempt_at: Date | null })[]
    >(
      `SELECT seq::text AS seq, event_id, account_id, action, message, status, attempts, series, created_at, updated_at,
              delivered_at, next_attempt_at, last_error, erased
         FROM events
        -- event_keys gives the seq, so the lookup prunes to one partition instead of probing each day's index.
        WHERE seq = (SELECT event_seq FROM event_keys WHERE event_id = $1) AND event_id = $1
          AND ($2::int IS NULL OR account_id = $2)`,
      [eventId, accountId ?? null],
    );
    if (!event) throw new ApiError(404, 'not_found', `event ${eventId} does not exist`);
    const attemptRows = await this.dataSource.query<(Omit<AttemptView, 'started_at'> & { started_at: Date; destination_id: string | null })[]>(
      `SELECT attempt, series, started_at, duration_ms, url, request_headers, request_body, response_status,
              response_headers, response_body, error, destination_id
         FROM delivery_attempts
        WHERE event_seq = $1
        ORDER BY attempt, id`,
      [event.seq],
    );
    const attemptsOf = (destinationId: string | null): AttemptView[] =>
      attemptRows
        .filter((row) => row.destination_id === destinationId)
        .map(({ destination_id: _destination, ...attempt }) => ({ ...attempt, started_at: attempt.started_at.toISOString() }));
    const destinationRows = await this.dataSource.query<{ destination_id: string; status: string; last_error: string | null }[]>(
      // In the order the destinations were added, as the destination lists show them.
      `SELECT dd.destination_id, dd.status, dd.last_error
         FROM destination_deliveries dd LEFT JOIN destinations d ON d.id = dd.destination_id
        WHERE dd.event_seq = $1
        ORDER BY d.created_at NULLS LAST, dd.destination_id`,
      [event.seq],
    );
    const primary = attemptsOf(null);
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
      erased: event.erased,
      attempts: primary,
      deliveries: [
        { destination_id: PRIMARY_DESTINATION_ID, status: event.status, last_error: event.last_error, attempts: primary },
        ...destinationRows.map((row) => ({ ...row, attempts: attemptsOf(row.destination_id) })),
      ],
    };
  }

}
