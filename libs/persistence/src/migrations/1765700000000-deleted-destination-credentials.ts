import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A deleted destination keeps no credentials (CONTRACT §11: its credentials are deleted at once, its
 * deliveries stay listed until retention): its sealed target and auth, its signing secrets and the
 * shown target (a webhook path can itself be the secret) are nulled by the delete, so the signing
 * secret may now be null, and only on a deleted row. Destinations deleted before this migration lose
 * theirs here. The row itself stays: deliveries and attempts name it until retention removes them.
 */
export class DeletedDestinationCredentials1765700000000 implements MigrationInterface {
  name = 'DeletedDestinationCredentials1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE destinations ALTER COLUMN signing_secret DROP NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE destinations
         DROP CONSTRAINT destinations_target_check,
         ADD CONSTRAINT destinations_target_check CHECK (target IS NOT NULL OR id = 'primary' OR deleted_at IS NOT NULL),
         ADD CONSTRAINT destinations_signing_secret_check CHECK (signing_secret IS NOT NULL OR deleted_at IS NOT NULL)`,
    );
    await queryRunner.query(
      `UPDATE destinations
          SET target = NULL, target_shown = NULL, auth = NULL, signing_secret = NULL, previous_signing_secret = NULL, previous_secret_expires_at = NULL
        WHERE deleted_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE destinations DROP CONSTRAINT destinations_signing_secret_check, DROP CONSTRAINT destinations_target_check`);
    // The deleted credentials are gone for good: empty values, which a deleted destination never calls or signs with.
    await queryRunner.query(`UPDATE destinations SET signing_secret = '' WHERE signing_secret IS NULL`);
    await queryRunner.query(`UPDATE destinations SET target = '' WHERE target IS NULL AND id <> 'primary'`);
    await queryRunner.query(
      `ALTER TABLE destinations ALTER COLUMN signing_secret SET NOT NULL, ADD CONSTRAINT destinations_target_check CHECK (target IS NOT NULL OR id = 'primary')`,
    );
  }
}
