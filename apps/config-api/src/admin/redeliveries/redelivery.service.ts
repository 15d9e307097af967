import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RESTART_SERIES } from '@app/persistence';
import { ApiError, DeliveryProducer, restartedSeriesStep } from '@app/runtime';
import { RedeliveryTasks } from './redelivery-tasks.service';
import type { BulkRedeliverDto } from './redelivery-task.dto';
import type { RestartedRow } from './restart-series';
import type { EventFilter, EventRedelivered, RedeliveryStarted } from '@app/payloads';
import { requireAccount } from '../require-account';

@Injectable()
export class RedeliveryService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
    private readonly tasks: RedeliveryTasks,
  ) {}

  /**
   * The row is restarted even when Redis is away: the worker's reconciler then enqueues it. `accountId`
   * scopes it (the portal): another account's event is missing, exactly like an unknown id.
   */
  async redeliverOne(eventId: string, accountId?: number): Promise<EventRedelivered> {
    const [rows] = await this.dataSource.query<[RestartedRow[], number]>(
      // event_keys gives the seq: one partition's primary key instead of a probe of every day (events has no event_id index).
      `UPDATE events SET ${RESTART_SERIES}
        WHERE seq = (SELECT event_seq FROM event_keys WHERE event_id = $1) AND event_id = $1 AND ($2::int IS NULL OR account_id = $2)
       RETURNING seq::text AS seq, series, account_id`,
      [eventId, accountId ?? null],
    );
    if (rows.length === 0) throw new ApiError(404, 'not_found', `event ${eventId} does not exist`);
    await this.producer.enqueue(rows.map(restartedSeriesStep));
    return { event_id: eventId, status: 'queued', series: rows[0].series };
  }

  /** An account's events in a final status, as a background task (see RedeliveryRunner). */
  async redeliverAccount(accountId: number, body: BulkRedeliverDto): Promise<RedeliveryStarted> {
    await requireAccount(this.dataSource, accountId);
    return this.tasks.start({ account_id: accountId, status: body.status, since: body.since, until: body.until });
  }

  /** Everything the event-list filter matches; status defaults to failed, and an empty filter is refused. */
  async redeliverMatching(filter: EventFilter): Promise<RedeliveryStarted> {
    const given = Object.values(filter).some((value) => value !== undefined);
    if (!given) {
      throw new ApiError(422, 'validation_failed', 'give at least one filter (account_id, action, status, since, until or q)', [
        { path: 'status', problem: 'at least one filter is required' },
      ]);
    }
    if (filter.account_id !== undefined) await requireAccount(this.dataSource, filter.account_id);
    return this.tasks.start({ ...filter, status: filter.status ?? 'failed' });
  }
}
