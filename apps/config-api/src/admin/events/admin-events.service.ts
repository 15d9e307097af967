import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventDetail, EventPage } from '@app/payloads';
import { addEventFilter, Conditions, partitions, PRIMARY_DESTINATION_ID, Sql, timeRange } from '@app/persistence';
import { checkingQuery, DomainError, ENVIRONMENT, type Environment } from '@app/runtime';
import { DEFAULT_PAGE_SIZE, type ListEventsQueryDto } from './admin-events.dto';
import {
  EVENT_ATTEMPTS,
  EVENT_DELIVERIES,
  EVENT_DETAIL,
  type EventWithPrimaryRow,
  LISTED_EVENT_COLUMNS,
  WITH_PRIMARY_DELIVERY,
} from './admin-events.statements';
import { attemptView, type BodySource } from './attempt-body';
import { decodeCursor, encodeCursor } from './event-cursor';

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

@Injectable()
export class AdminEventsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /**
   * Newest first by `seq`, each event with its primary delivery (one probe of its key per event the
   * walk reaches, WITH_PRIMARY_DELIVERY). One extra row is read to know whether another page exists.
   *
   * The cost of `status`: no index of `deliveries` names it (outcomes stay HOT updates,
   * docs/delivery-model.md), so a status filter walks the events newest first (by (account_id, seq) or
   * seq, inside since/until) and probes each one's delivery: a page of a rare status reads every event
   * between its rows, and a status that matches nothing reads the whole range (about 30 µs an event:
   * 30,000 events of one account, 1 s). since/until bound that walk (they become a seq range), and so
   * does the account.
   */
  async list(query: ListEventsQueryDto): Promise<EventPage> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const conditions = new Conditions();
    checkingQuery(() => addEventFilter(conditions, query, { event: 'events', delivery: 'd' }));
    if (query.cursor !== undefined) conditions.add((p) => `events.seq < ${p}::bigint`, decodeCursor(query.cursor));
    const where = conditions.where();
    const limitPlaceholder = conditions.next(limit + 1);
    // since/until become a seq range too, so only the partitions of that time are read (see partitions.timeWindowedSelect).
    const { since, until } = checkingQuery(() => timeRange(query.since, query.until));
    const sql = partitions.timeWindowedSelect(
      (extra) => `SELECT ${LISTED_EVENT_COLUMNS} FROM ${WITH_PRIMARY_DELIVERY} ${where ? `${where} AND` : 'WHERE'} ${extra}`,
      (value) => conditions.next(value),
      limitPlaceholder,
      since,
      until,
    );
    const rows = await this.dataSource.query<EventWithPrimaryRow[]>(sql, conditions.parameters);
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
    const event = await this.sql.first(EVENT_DETAIL, { eventId, accountId: accountId ?? null });
    if (!event) throw new DomainError('not_found', `event ${eventId} does not exist`);
    const [attemptRows, deliveryRows] = await Promise.all([
      this.sql.rows(EVENT_ATTEMPTS, { seq: event.seq }),
      this.sql.rows(EVENT_DELIVERIES, { seq: event.seq }),
    ]);
    const source: BodySource = {
      eventId: event.event_id,
      action: event.action,
      messageText: event.message_text,
      createdAt: event.created_at,
      erased: event.erased,
      publicUrl: this.environment.publicUrl,
    };
    const attemptsOf = (destinationId: string) =>
      attemptRows.filter((row) => row.destination_id === destinationId).map((row) => attemptView(row, source));
    const deliveries = deliveryRows.map((row) => ({ ...row, attempts: attemptsOf(row.destination_id) }));
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
      // The primary's delivery is the event's own fields (CONTRACT §11).
      attempts: attemptsOf(PRIMARY_DESTINATION_ID),
      deliveries,
    };
  }
}
