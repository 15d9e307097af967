import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention deletes rollup rows older than RETENTION_DAYS oldest first; without an index on the bucket
 * that would be a scan of the whole table every hour. The upserts never change bucket_start, so the
 * index does not cost them their HOT updates.
 */
export class RollupRetentionIndex1764300000000 implements MigrationInterface {
  name = 'RollupRetentionIndex1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS delivery_rollups_bucket_start_idx ON delivery_rollups (bucket_start)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS delivery_rollups_bucket_start_idx`);
  }
}
