import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `event_keys` loses its index on `event_seq`: every stored event paid a btree insert into it (66 bytes
 * of WAL an event, `bench/path-cost`) for the one reader that walked it, retention's hourly sweep of the
 * keys whose events were gone. Retention now forgets a day's ids by the day's own events (found by id,
 * through the primary key) before dropping the day, and the rows it deletes one by one take their keys
 * in the same statement, as account deletion does.
 *
 * What that sweep had not reached yet (keys below the oldest stored event: a day dropped since its last
 * run) is deleted here, through the index, before it goes.
 */
export class EventKeysWithoutSeqIndex1766100000000 implements MigrationInterface {
  name = 'EventKeysWithoutSeqIndex1766100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM event_keys WHERE event_seq < (SELECT coalesce(min(seq), 9223372036854775807) FROM events)`);
    await queryRunner.query(`DROP INDEX IF EXISTS event_keys_seq_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS event_keys_seq_idx ON event_keys (event_seq)`);
  }
}
