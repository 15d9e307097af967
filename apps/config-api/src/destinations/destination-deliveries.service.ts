import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource, type EntityManager } from 'typeorm';
import { type DestinationStepRow, RESTART_DESTINATION_SERIES, RESTARTED_DESTINATION_COLUMNS, resumeDestination } from '@app/persistence';
import { announceStoredSettingsChange, type DeliveryJobData, DeliveryProducer, pendingDestinationStep, REDIS, RedisKeys } from '@app/runtime';

/**
 * What resuming and redelivering do to a destination's deliveries. Steps go through DeliveryProducer,
 * which never fails the caller: rows whose job could not be enqueued are due, and the reconciler sends them.
 */
@Injectable()
export class DestinationDeliveries {
  private readonly logger = new Logger(DestinationDeliveries.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Every pending delivery of the destination (`primary`: the account's pending events) enqueued again in seq order. */
  async resume(accountId: number, destinationId: string): Promise<void> {
    await resumeDestination(this.dataSource, { addBulk: async (steps) => void (await this.producer.enqueue(steps)) }, accountId, destinationId);
    // resumeDestination stores paused=false once more (a version bump): announced again so every cache sees the last version.
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
  }

  /**
   * Starts a new series for the event's deliveries to its live destinations (every one, or only
   * `destinationId`) and answers their first steps, to enqueue once the transaction committed.
   */
  async restartForEvent(manager: EntityManager, eventSeq: string, destinationId: string | null): Promise<DeliveryJobData[]> {
    const [rows] = await manager.query<[DestinationStepRow[], number]>(
      `UPDATE destination_deliveries d SET ${RESTART_DESTINATION_SERIES}
         FROM destinations dst
        WHERE d.event_seq = $1::bigint AND dst.id = d.destination_id AND dst.deleted_at IS NULL
          AND ($2::text IS NULL OR d.destination_id = $2)
        RETURNING ${RESTARTED_DESTINATION_COLUMNS}`,
      [eventSeq, destinationId],
    );
    return rows.map(pendingDestinationStep);
  }
}
