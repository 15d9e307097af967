import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The triggers' WHEN as this migration wrote it (the setting is gone with migration 1765500000000). */
const BOOKS_NOT_KEPT_BY_STATEMENT_SQL = `current_setting('app.event_books_kept_at', true) IS DISTINCT FROM statement_timestamp()::text`;

/** The insert triggers on `events` whose work a statement may do itself, as created before this migration. */
const TRIGGERS = [
  {
    name: 'events_claim_event_keys',
    timing: 'AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows',
    action: 'EXECUTE FUNCTION claim_event_keys()',
  },
  {
    name: 'events_tally_insert',
    timing: 'AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows',
    action: 'EXECUTE FUNCTION tally_event_changes()',
  },
] as const;

/**
 * Ingest's store keeps the tallies and claimed ids of its new events inside its own statement
 * (stats/event-books.ts): the key-claim and tally triggers on INSERT now stand aside for a statement
 * that says so, and keep doing the work for every other writer (config-api's test events, tools,
 * tests). A WHEN on a statement trigger is evaluated when the trigger is queued, so a skipped trigger
 * costs neither its PL/pgSQL call nor its queries. The UPDATE tally trigger is left as it was: the
 * worker's record doing the same in its statement measured no cheaper (the aggregated tally statement
 * costs as much there as in the trigger; measured in the commit that chose it).
 */
export class StatementsKeepEventBooks1765400000000 implements MigrationInterface {
  name = 'StatementsKeepEventBooks1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const trigger of TRIGGERS) {
      await queryRunner.query(`DROP TRIGGER ${trigger.name} ON events`);
      await queryRunner.query(
        `CREATE TRIGGER ${trigger.name} ${trigger.timing} FOR EACH STATEMENT WHEN (${BOOKS_NOT_KEPT_BY_STATEMENT_SQL}) ${trigger.action}`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const trigger of TRIGGERS) {
      await queryRunner.query(`DROP TRIGGER ${trigger.name} ON events`);
      await queryRunner.query(`CREATE TRIGGER ${trigger.name} ${trigger.timing} FOR EACH STATEMENT ${trigger.action}`);
    }
  }
}
