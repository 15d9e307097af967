import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ingest stops appending a book entry for every statement's new events. Each primary delivery keeps the
 * status it was stored with (`deliveries.first_status`, written with the row and never changed; no index
 * names it, so outcomes stay HOT updates), and the worker's fold counts the events accepted since its last
 * pass from those rows, up to a seq no open transaction can still write below (`book_marks.counted_below`),
 * moving the mark in the same statement. Readers add the events at or above the mark. That saves an insert
 * and the fold's delete a statement: at one event a statement, about 160 bytes of WAL an event
 * (`bench/path-cost`).
 *
 * Deliveries stored before (and by an older ingest during a rolling deploy) have no first_status: their
 * book entries count them, and the fold never does. The mark starts at the migration's clock.
 *
 * `down()` appends the entries the older ingest would have written for the events not counted yet.
 */
export class AcceptedEventsCountedFromRows1766400000000 implements MigrationInterface {
  name = 'AcceptedEventsCountedFromRows1766400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE deliveries ADD COLUMN first_status varchar(16)`);
    await queryRunner.query(`CREATE TABLE book_marks (id smallint PRIMARY KEY CHECK (id = 1), counted_below bigint NOT NULL)`);
    await queryRunner.query(`INSERT INTO book_marks (id, counted_below) VALUES (1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 20)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `INSERT INTO book_entries (account_id, created_at, to_status, events)
       SELECT d.account_id, e.created_at, d.first_status, count(*)
         FROM deliveries d JOIN events e ON e.seq = d.event_seq, book_marks m
        WHERE d.event_seq >= m.counted_below AND d.destination_id = 'primary' AND d.first_status IS NOT NULL
        GROUP BY 1, 2, 3`,
    );
    await queryRunner.query(`DROP TABLE book_marks`);
    await queryRunner.query(`ALTER TABLE deliveries DROP COLUMN first_status`);
  }
}
