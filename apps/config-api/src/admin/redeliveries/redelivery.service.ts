import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RESTART_SERIES } from '@app/persistence';
import { ApiError, type DeliveryJobData, DeliveryProducer, restartedSeriesStep } from '@app/runtime';
import { DestinationDeliveries } from '../../destinations/destination-deliveries.service';
import { RedeliveryTasks } from './redelivery-tasks.service';
import type { BulkRedeliverDto } from './redelivery-task.dto';
import type { RestartedRow } from './restart-series';
import { type EventFilter, type EventRedelivered, PRIMARY_DESTINATION_ID, type RedeliveryStarted } from '@app/payloads';
import { requireAccount } from '../require-account';

@Injectable()
export class RedeliveryService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
    private readonly tasks: RedeliveryTasks,
    private readonly destinationDeliveries: DestinationDeliveries,
  ) {}

  /**
   * The rows are restarted even when Redis is away: the worker's reconciler then enqueues them. `accountId`
   * scopes it (the portal): another account's event is missing, exactly like an unknown id. Without
   * `destinationId` every destination that took the event starts a new series (the primary's is the
   * event row's, and its series is the answer's); with one, only that delivery (CONTRACT §11).
   */
  async redeliverOne(eventId: string, accountId?: number, destinationId?: string): Promise<EventRedelivered> {
    const toPrimary = destinationId === undefined || destinationId === PRIMARY_DESTINATION_ID;
    const toOthers = destinationId === undefined ? null : destinationId === PRIMARY_DESTINATION_ID ? undefined : destinationId;
    const { steps, series } = await this.dataSource.transaction(async (manager) => {
      const [event] = await manager.query<{ seq: string }[]>(
        `SELECT seq::text AS seq FROM events
          WHERE seq = (SELECT event_seq FROM event_keys WHERE event_id = $1) AND event_id = $1 AND ($2::int IS NULL OR account_id = $2)`,
        [eventId, accountId ?? null],
      );
      if (!event) throw new ApiError(404, 'not_found', `event ${eventId} does not exist`);
      const restarted: DeliveryJobData[] = [];
      let primarySeries: number | null = null;
      if (toPrimary) {
        const [rows] = await manager.query<[RestartedRow[], number]>(
          `UPDATE events SET ${RESTART_SERIES} WHERE seq = $1::bigint AND event_id = $2 RETURNING seq::text AS seq, series, account_id`,
          [event.seq, eventId],
        );
        restarted.push(...rows.map(restartedSeriesStep));
        primarySeries = rows[0]?.series ?? null;
      }
      if (toOthers !== undefined) {
        const others = await this.destinationDeliveries.restartForEvent(manager, event.seq, toOthers);
        if (toOthers !== null && others.length === 0) {
          throw new ApiError(404, 'not_found', `event ${eventId} has no delivery to destination ${toOthers.slice(0, 64)}`);
        }
        restarted.push(...others);
      }
      return { steps: restarted, series: primarySeries ?? restarted[0]?.series ?? 0 };
    });
    await this.producer.enqueue(steps);
    return { event_id: eventId, status: 'queued', series };
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
