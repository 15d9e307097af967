import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ordering per subject (CONTRACT §9): `callback_subject(action, message)` names what an event is about
 * (customer:<id>, organization:<id>, sub_session:<id>, conversation:<id>; null when the action has no
 * subject), and a partial index over the pending rows finds, for one account and subject, whether an
 * earlier event still waits. Only pending rows are indexed, so the index stays as small as the backlog.
 */
export class EventSubjects1764600000000 implements MigrationInterface {
  name = 'EventSubjects1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION callback_subject(action text, message json) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN action LIKE 'Customer\\_%' THEN 'customer:' || (message->>'id')
          WHEN action LIKE 'Organization\\_%' THEN 'organization:' || (message->>'id')
          WHEN action LIKE 'ImSubSession\\_%' THEN 'sub_session:' || (message->>'id')
          WHEN action = 'AgentNote_update' THEN COALESCE('sub_session:' || (message->>'sub_session_id'), 'conversation:' || (message->>'conversation_id'))
          WHEN action = 'ImSurveyVote_create' THEN 'sub_session:' || (message->>'sub_session_id')
          WHEN action = 'ShutQueue_create' THEN 'customer:' || (message->>'customer_id')
        END
      $$`);
    await queryRunner.query(`
      CREATE INDEX IF NOT EXISTS events_pending_subject_idx ON events (account_id, callback_subject(action, message), seq)
       WHERE status IN ('queued', 'retrying') AND series = 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS events_pending_subject_idx`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS callback_subject(text, json)`);
  }
}
