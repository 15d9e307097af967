import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk redelivery reaches every destination (CONTRACT §11): a task first restarts the primary's
 * deliveries (the events, as before), then the matching deliveries to the other destinations, each
 * phase with its own cursor so a task resumed after a restart goes on where it stopped.
 *
 * `destination_deliveries_failed_idx` finds an account's failed deliveries, newest first, without
 * reading its delivered ones: "Redeliver failed" is the bulk redelivery operators use. It is partial,
 * so ingest's insert of a new (queued) delivery never writes to it.
 */
export class BulkRedeliveryDestinations1765200000000 implements MigrationInterface {
  name = 'BulkRedeliveryDestinations1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE redelivery_tasks
        ADD COLUMN phase varchar(16) NOT NULL DEFAULT 'events',
        ADD COLUMN destination_below_seq bigint,
        ADD COLUMN destination_below_id varchar(32),
        ADD CONSTRAINT redelivery_tasks_phase_check CHECK (phase IN ('events', 'destinations'))`);
    await queryRunner.query(
      `CREATE INDEX destination_deliveries_failed_idx ON destination_deliveries (account_id, event_seq) WHERE status = 'failed'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS destination_deliveries_failed_idx`);
    await queryRunner.query(`
      ALTER TABLE redelivery_tasks
        DROP CONSTRAINT redelivery_tasks_phase_check,
        DROP COLUMN destination_below_id,
        DROP COLUMN destination_below_seq,
        DROP COLUMN phase`);
  }
}
