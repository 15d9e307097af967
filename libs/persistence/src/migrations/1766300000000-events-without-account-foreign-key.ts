import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events lose their foreign key to `accounts`. Its check ran once for every stored event: a query per
 * row, and a row lock on the account (`FOR KEY SHARE`), which writes a WAL record (54 bytes an event at
 * one event a statement, `bench/path-cost`) and, when two statements of one account overlap, a
 * multixact. Ingest's statement already keeps only the items of live accounts (it reads them in its
 * `known` step), and an account row is removed only by account deletion, which now waits until no
 * statement that saw the account live can still commit (ACCOUNT_DELETION_SETTLE, longer than the
 * statements' 15 s bound) and takes whatever such a statement stored before it removes the row.
 *
 * `down()` puts the key back; it fails while events of a removed account remain.
 */
export class EventsWithoutAccountForeignKey1766300000000 implements MigrationInterface {
  name = 'EventsWithoutAccountForeignKey1766300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_account_id_fkey`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events ADD CONSTRAINT events_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id)`);
  }
}
