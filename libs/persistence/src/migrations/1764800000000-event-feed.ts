import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pull feed (CONTRACT §10) and test events.
 *
 * Concurrent ingests commit out of order: a row with a smaller seq can become visible after a larger
 * one was already served. Each row now records the id of the transaction that inserted it (`txid`,
 * xid8: 64-bit, never wraps, and unlike `xmin` unchanged when the worker updates the row). Every
 * transaction that can still commit has an id at or above `pg_snapshot_xmin(pg_current_snapshot())`,
 * so the feed serves only rows below it, ordered by (txid, seq): no row can later appear before a
 * cursor already handed out. Rows from before this migration keep NULL (read as 0: committed long
 * ago), so adding the column rewrites nothing.
 *
 * `test` marks events made by send_test_event / the portal's button: delivered even when the action's
 * permission is off (a marker column rather than an event_id prefix, which ingest clients could send).
 * A constant default is metadata only: no rewrite either.
 */
export class EventFeed1764800000000 implements MigrationInterface {
  name = 'EventFeed1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events ADD COLUMN txid xid8`);
    await queryRunner.query(`ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()`);
    await queryRunner.query(`ALTER TABLE events ADD COLUMN test boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`CREATE INDEX events_feed_idx ON events (account_id, (COALESCE(txid, '0'::xid8)), seq)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX events_feed_idx`);
    await queryRunner.query(`ALTER TABLE events DROP COLUMN test`);
    await queryRunner.query(`ALTER TABLE events DROP COLUMN txid`);
  }
}
