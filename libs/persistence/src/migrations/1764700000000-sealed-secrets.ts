import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets are now stored sealed (AES-256-GCM, `gcm1:<key id>:<iv>:<ciphertext>`), longer than the old
 * plaintext limits, so the columns become text (varchar to text needs no table rewrite in PostgreSQL).
 * Encrypting the plaintext rows already there needs SECRETS_KEY, which a migration does not have:
 * `npm run secrets:rotate` does it (npm start runs it after migrating), and until then the apps read
 * plaintext rows as they are.
 */
export class SealedSecrets1764700000000 implements MigrationInterface {
  name = 'SealedSecrets1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE accounts
        ALTER COLUMN open_api_token TYPE text,
        ALTER COLUMN signing_secret TYPE text,
        ALTER COLUMN previous_signing_secret TYPE text`);
    await queryRunner.query(`ALTER TABLE bot_webhooks ALTER COLUMN key TYPE text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Sealed values do not fit the old limits; going back needs the plaintext, which a migration cannot recover.
    await queryRunner.query(`
      ALTER TABLE accounts
        ALTER COLUMN open_api_token TYPE varchar(512),
        ALTER COLUMN signing_secret TYPE varchar(512),
        ALTER COLUMN previous_signing_secret TYPE varchar(512)`);
    await queryRunner.query(`ALTER TABLE bot_webhooks ALTER COLUMN key TYPE varchar(512)`);
  }
}
