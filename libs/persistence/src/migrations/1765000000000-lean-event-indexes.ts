import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes every stored event paid for and no query used (issue 36: the single-event path's cost in
 * PostgreSQL). Each event is inserted once and, as the worker records its outcome, updated at least
 * once; that update changes the indexed status, so it is never HOT and every index of `events` gets a
 * second entry. Measured with bench/path-cost (20 events a statement): these three cost 320 WAL bytes
 * of the 7,800 per delivered event, and the CPU of maintaining them.
 *
 * - `events_event_id_idx`: since partitioning, lookups by id go through `event_keys` (one probe, then
 *   the event by seq in one partition); the last statement that filtered events by event_id (one
 *   redelivery) now does so too.
 * - `delivery_attempts_event_idx` (event_seq, attempt): the primary key (event_seq, id) finds an event's
 *   attempts; ordering those few rows by attempt is a sort of a handful.
 * - `delivery_attempts_started_at_idx`: attempts go by partition (day of their event) and by event_seq;
 *   nothing reads them by start time.
 *
 * On a large existing log, the down() rebuilds are long: create them beforehand with CREATE INDEX ON
 * ONLY and CREATE INDEX CONCURRENTLY per partition, as 1764900000000 describes.
 */
export class LeanEventIndexes1765000000000 implements MigrationInterface {
  name = 'LeanEventIndexes1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // On a partitioned table, dropping the parent's index drops each partition's (legacy ones included).
    await queryRunner.query(`DROP INDEX IF EXISTS events_event_id_idx`);
    await queryRunner.query(`DROP INDEX IF EXISTS delivery_attempts_event_idx`);
    await queryRunner.query(`DROP INDEX IF EXISTS delivery_attempts_started_at_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS delivery_attempts_started_at_idx ON delivery_attempts (started_at)`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS delivery_attempts_event_idx ON delivery_attempts (event_seq, attempt)`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS events_event_id_idx ON events (event_id)`);
  }
}
