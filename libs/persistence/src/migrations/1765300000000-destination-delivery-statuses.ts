import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The statuses as they were when this migration ran (1765500000000 adds `expired`). */
const EVENT_STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'];

/**
 * A destination delivery's status takes the event statuses only, as an event's does
 * (events_status_check). The worker's step guard finds a row still owed a call as "not final"
 * (isNotFinalSql), which equals "pending" only while no other status can be stored.
 */
export class DestinationDeliveryStatuses1765300000000 implements MigrationInterface {
  name = 'DestinationDeliveryStatuses1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statuses = EVENT_STATUSES.map((status) => `'${status}'`).join(', ');
    await queryRunner.query(`ALTER TABLE destination_deliveries ADD CONSTRAINT destination_deliveries_status_check CHECK (status IN (${statuses}))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE destination_deliveries DROP CONSTRAINT IF EXISTS destination_deliveries_status_check`);
  }
}
