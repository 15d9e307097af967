import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Endpoints that stay dead are disabled (CONTRACT §5, ENDPOINT_DISABLE_AFTER). The state lives with the
 * account's callback settings: `failing_since` is when the current run of failed attempts began (null
 * after any success), `disabled_at`/`disabled_reason` say the worker stopped calling. The worker writes
 * these only on transitions, so the columns add no write per attempt.
 */
export class EndpointDisabling1763761200000 implements MigrationInterface {
  name = 'EndpointDisabling1763761200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE callback_settings
        ADD COLUMN failing_since timestamptz,
        ADD COLUMN disabled_at timestamptz,
        ADD COLUMN disabled_reason text`);
    // Disabled endpoints are few: the metrics gauge and the operators' list read only this small index.
    await queryRunner.query(
      `CREATE INDEX callback_settings_disabled_idx ON callback_settings (disabled_at DESC) WHERE disabled_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS callback_settings_disabled_idx`);
    await queryRunner.query(`
      ALTER TABLE callback_settings
        DROP COLUMN IF EXISTS disabled_reason,
        DROP COLUMN IF EXISTS disabled_at,
        DROP COLUMN IF EXISTS failing_since`);
  }
}
