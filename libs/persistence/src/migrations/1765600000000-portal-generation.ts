import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A portal generation per account (CONTRACT §10: rotating the Open API token ends every portal session
 * and unused link of the account). Codes and sessions carry the generation they were opened under and
 * count only while it is the account's: rotate-token moves the generation in the statement that
 * replaces the token, so a link or session opened while it runs (whose insert the rotation's delete
 * could not see) is dead all the same. The session index on (account_id, created_at) finds the oldest
 * live one to end when an eleventh opens.
 */
export class PortalGeneration1765600000000 implements MigrationInterface {
  name = 'PortalGeneration1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE accounts ADD COLUMN portal_generation integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE portal_link_codes ADD COLUMN generation integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE portal_sessions ADD COLUMN generation integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`DROP INDEX portal_sessions_account_idx`);
    await queryRunner.query(`CREATE INDEX portal_sessions_account_idx ON portal_sessions (account_id, created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX portal_sessions_account_idx`);
    await queryRunner.query(`CREATE INDEX portal_sessions_account_idx ON portal_sessions (account_id)`);
    await queryRunner.query(`ALTER TABLE portal_sessions DROP COLUMN generation`);
    await queryRunner.query(`ALTER TABLE portal_link_codes DROP COLUMN generation`);
    await queryRunner.query(`ALTER TABLE accounts DROP COLUMN portal_generation`);
  }
}
