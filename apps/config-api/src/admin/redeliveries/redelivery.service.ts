import { Injectable } from '@nestjs/common';
import { PRIMARY_DESTINATION_ID, RESTART_DELIVERIES, Sql } from '@app/persistence';
import { DeliveryProducer, DomainError, stepOfRow } from '@app/runtime';
import { RedeliveryTasks } from './redelivery-tasks.service';
import type { BulkRedeliverDto } from './redelivery-task.dto';
import type { EventFilter, EventRedelivered, RedeliveryStarted } from '@app/payloads';
import { requireAccount } from '../require-account';

@Injectable()
export class RedeliveryService {
  constructor(
    private readonly sql: Sql,
    private readonly producer: DeliveryProducer,
    private readonly tasks: RedeliveryTasks,
  ) {}

  /**
   * The deliveries are restarted even when Redis is away: the worker's reconciler then enqueues them.
   * `accountId` scopes it (the portal): another account's event is missing, exactly like an unknown id.
   * Without `destinationId` every destination that took the event starts a new series; with one, only
   * that delivery (CONTRACT §11). The answer's series is the primary's when it was restarted.
   */
  async redeliverOne(eventId: string, accountId?: number, destinationId?: string): Promise<EventRedelivered> {
    const restarted = await this.sql.transaction(async (runner) => {
      const [event] = (await runner.query(
        `SELECT seq::text AS seq FROM events
          WHERE seq = (SELECT event_seq FROM event_keys WHERE event_id = $1) AND event_id = $1 AND ($2::int IS NULL OR account_id = $2)`,
        [eventId, accountId ?? null],
      )) as { seq: string }[];
      if (!event) throw new DomainError('not_found', `event ${eventId} does not exist`);
      const deliveries = (await runner.query(
        `SELECT destination_id FROM deliveries WHERE event_seq = $1::bigint AND ($2::text IS NULL OR destination_id = $2)`,
        [event.seq, destinationId ?? null],
      )) as { destination_id: string }[];
      const rows = await this.sql.rows(RESTART_DELIVERIES, { seqs: deliveries.map(() => event.seq), destinationIds: deliveries.map((row) => row.destination_id) }, runner);
      if (destinationId !== undefined && rows.length === 0) {
        throw new DomainError('not_found', `event ${eventId} has no delivery to destination ${destinationId.slice(0, 64)}`);
      }
      return rows;
    });
    await this.producer.enqueue(restarted.map(stepOfRow));
    const primary = restarted.find((row) => row.destination_id === PRIMARY_DESTINATION_ID) ?? restarted[0];
    return { event_id: eventId, status: 'queued', series: primary?.series ?? 0 };
  }

  /** An account's events in a final status, as a background task (a delivery worker runs it: RedeliveryRunner). */
  async redeliverAccount(accountId: number, body: BulkRedeliverDto): Promise<RedeliveryStarted> {
    await requireAccount(this.sql, accountId);
    return this.tasks.start({ account_id: accountId, status: body.status, since: body.since, until: body.until });
  }

  /** Everything the event-list filter matches; status defaults to failed, and an empty filter is refused. */
  async redeliverMatching(filter: EventFilter): Promise<RedeliveryStarted> {
    const given = Object.values(filter).some((value) => value !== undefined);
    if (!given) {
      throw new DomainError('validation_failed', 'give at least one filter (account_id, action, status, since, until or q)', [
        { path: 'status', problem: 'at least one filter is required' },
      ]);
    }
    if (filter.account_id !== undefined) await requireAccount(this.sql, filter.account_id);
    return this.tasks.start({ ...filter, status: filter.status ?? 'failed' });
  }
}
