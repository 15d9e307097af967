import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account portal's one-time link codes and its sessions (CONTRACT §10). Only SHA-256 digests of
 * codes and tokens are stored: both are 32 random bytes, so a digest is enough to make a stolen table
 * useless, and lookups stay one index probe. Rows go with their account.
 */
export class PortalSessions1764810000000 implements MigrationInterface {
  name = 'PortalSessions1764810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE portal_link_codes (
        code_digest bytea PRIMARY KEY,
        account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE portal_sessions (
        token_digest bytea PRIMARY KEY,
        account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Expired rows are trimmed by expiry; the account index serves the cascade.
    await queryRunner.query(`CREATE INDEX portal_link_codes_expires_idx ON portal_link_codes (expires_at)`);
    await queryRunner.query(`CREATE INDEX portal_link_codes_account_idx ON portal_link_codes (account_id)`);
    await queryRunner.query(`CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at)`);
    await queryRunner.query(`CREATE INDEX portal_sessions_account_idx ON portal_sessions (account_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE portal_sessions`);
    await queryRunner.query(`DROP TABLE portal_link_codes`);
  }
}
