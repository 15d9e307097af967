import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CLAIM_EVENT_KEY_ROW_TRIGGER_FUNCTION } from './1764200000000-time-partitioned-events';

/** The statement-level claim; 1765500000000 creates it again, to the letter, after dropping the events triggers. */
export const CLAIM_EVENT_KEYS_FUNCTION = `
      CREATE FUNCTION claim_event_keys() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        missing boolean;
        taken varchar;
      BEGIN
        -- EXECUTE: planned for this statement's row count each time, never a plan cached for another size.
        EXECUTE 'SELECT bool_or(k.event_id IS NULL), min(n.event_id) FILTER (WHERE k.event_seq <> n.seq)
                   FROM new_rows n LEFT JOIN event_keys k ON k.event_id = n.event_id' INTO missing, taken;
        IF missing THEN
          INSERT INTO event_keys (event_id, account_id, event_seq)
          SELECT n.event_id, n.account_id, n.seq FROM new_rows n ORDER BY n.seq
              ON CONFLICT (event_id) DO NOTHING;
          EXECUTE 'SELECT min(n.event_id) FROM new_rows n JOIN event_keys k ON k.event_id = n.event_id WHERE k.event_seq <> n.seq' INTO taken;
        END IF;
        IF taken IS NOT NULL THEN
          RAISE unique_violation USING MESSAGE = format('event_id %s is already taken', taken), CONSTRAINT = 'event_keys_pkey';
        END IF;
        RETURN NULL;
      END $$`;

/**
 * The rule "an event_id belongs to one event" (event_keys, see 1764200000000) was checked by a row-level
 * trigger: a PL/pgSQL call, an INSERT … ON CONFLICT and an EXISTS probe for every event inserted. Ingest
 * claims its keys itself in the same statement, so for it that was pure overhead: about a third of a
 * 500-event batch insert. The rule is now checked once per statement over its transition table: one join
 * finds the rows whose key is taken by another seq (refused with the same error as before) or missing
 * (claimed here, as before: tests, tools, rows moved by retention; then checked again, which also
 * catches two rows of one statement sharing an id).
 */
export class EventKeysPerStatement1764500000000 implements MigrationInterface {
  name = 'EventKeysPerStatement1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CLAIM_EVENT_KEYS_FUNCTION);
    await queryRunner.query(`DROP TRIGGER events_claim_event_key ON events`);
    await queryRunner.query(`DROP FUNCTION claim_event_key()`);
    await queryRunner.query(
      `CREATE TRIGGER events_claim_event_keys AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
         FOR EACH STATEMENT EXECUTE FUNCTION claim_event_keys()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER events_claim_event_keys ON events`);
    await queryRunner.query(`DROP FUNCTION claim_event_keys()`);
    await queryRunner.query(CLAIM_EVENT_KEY_ROW_TRIGGER_FUNCTION);
    await queryRunner.query(`CREATE TRIGGER events_claim_event_key AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION claim_event_key()`);
  }
}
