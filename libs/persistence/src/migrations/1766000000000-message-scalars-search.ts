import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `q` (search inside messages) keeps its index, at a fraction of the write cost. The jsonb_ops GIN index
 * on `message::jsonb` held every key and every scalar of every message as text: at ingest it was the
 * largest single piece of WAL (1,096 bytes an event against the event row's 658; `bench/path-cost`).
 * `q` only ever asks for a scalar, so the index now holds the message's scalars alone, flattened into
 * one array (`message_scalars`), under jsonb_path_ops, which keeps a 4-byte hash per entry: 465 bytes an
 * event. The search is an element of that array equal to `q` (`$[*] == "v"`: a string by its text, a
 * number by its value, so `1.50` meets `1.5`), and GIN rechecks every row its hashes find, so a
 * collision never shows.
 * Built-in functions only, so ingest's statement pays no function call of ours per event.
 *
 * Built inside the migration's transaction: on a large existing log, create `events_message_scalars_idx`
 * beforehand with CREATE INDEX CONCURRENTLY (on each partition, then on the parent).
 */
export class MessageScalarsSearch1766000000000 implements MigrationInterface {
  name = 'MessageScalarsSearch1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Inlined by the planner into the index expression and into the event list's query alike.
    await queryRunner.query(`
      CREATE FUNCTION message_scalars(message json) RETURNS jsonb
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT jsonb_path_query_array(message::jsonb, 'strict $.** ? (@.type() == "string" || @.type() == "number")')
      $$`);
    await queryRunner.query(`DROP INDEX IF EXISTS events_message_search_idx`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS events_message_scalars_idx ON events USING gin (message_scalars(message) jsonb_path_ops)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS events_message_search_idx ON events USING gin ((message::jsonb))`);
    await queryRunner.query(`DROP INDEX IF EXISTS events_message_scalars_idx`);
    await queryRunner.query(`DROP FUNCTION message_scalars(json)`);
  }
}
