import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-endpoint delivery options (CONTRACT §9): call order per subject and a pace across all workers.
 * They live beside push_url because an endpoint is one account's push URL; defaults keep today's
 * behaviour (no order, no pace but the concurrency caps).
 */
export class DeliveryOptions1764550000000 implements MigrationInterface {
  name = 'DeliveryOptions1764550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE callback_settings
        ADD COLUMN IF NOT EXISTS delivery_ordering varchar(16) NOT NULL DEFAULT 'none'
          CONSTRAINT callback_settings_delivery_ordering_check CHECK (delivery_ordering IN ('none', 'subject')),
        ADD COLUMN IF NOT EXISTS max_per_second integer
          CONSTRAINT callback_settings_max_per_second_check CHECK (max_per_second BETWEEN 1 AND 10000)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE callback_settings DROP COLUMN IF EXISTS max_per_second, DROP COLUMN IF EXISTS delivery_ordering`);
  }
}
