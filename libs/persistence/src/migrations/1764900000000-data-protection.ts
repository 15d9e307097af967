import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data protection (CONTRACT §12).
 *
 * - `events.erased`: the event's message and its attempts' bodies were cleared by an erasure. A
 *   constant default is metadata only (no rewrite). The message itself becomes the JSON `null`, so
 *   the column keeps its NOT NULL and the search index holds nothing for the row.
 * - `events_subject_idx`: every stored event by §9's subject (`callback_subject`), so an erasure finds
 *   a subject's events with one probe per daily partition instead of reading them. Created on the
 *   partitioned table, it is built on every partition and on each one made later. Rows without a
 *   subject are left out, and an erased row's subject is null, so it leaves the index.
 * - `erasure_tasks`: an erasure's progress, resumable by any config-api process (like redelivery
 *   tasks). The subject is cleared when the task ends, so the log of erasures keeps no identifier.
 * - `callback_settings.redaction_fields`, `redacted_through_seq`: key names whose values the stored
 *   copies hold as "[redacted]" once an event ends, and up to which event the background pass has
 *   redacted everything.
 * - `accounts.deleted_at`: offboarding started; the account is refused everywhere from then on and
 *   its rows are deleted in the background (`account_deletions`, a task like the erasures), the
 *   account row last, which frees its email.
 *
 * On a large existing log, build the subject index beforehand without blocking writes: CREATE INDEX
 * ON ONLY events (…), then CREATE INDEX CONCURRENTLY on each partition and ATTACH PARTITION each.
 */
export class DataProtection1764900000000 implements MigrationInterface {
  name = 'DataProtection1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events ADD COLUMN erased boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE INDEX IF NOT EXISTS events_subject_idx ON events (callback_subject(action, message), account_id, seq)
       WHERE callback_subject(action, message) IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE erasure_tasks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        status varchar(16) NOT NULL DEFAULT 'running',
        subject text,
        account_id integer,
        upper_seq bigint NOT NULL,
        events_erased integer NOT NULL DEFAULT 0,
        lease_owner varchar(64),
        heartbeat_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        error text,
        CONSTRAINT erasure_tasks_status_check CHECK (status IN ('running', 'done', 'failed'))
      )`);
    await queryRunner.query(`CREATE INDEX erasure_tasks_running_idx ON erasure_tasks (heartbeat_at) WHERE status = 'running'`);
    await queryRunner.query(`ALTER TABLE callback_settings ADD COLUMN redaction_fields text[] NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE callback_settings ADD COLUMN redacted_through_seq bigint`);
    await queryRunner.query(`ALTER TABLE accounts ADD COLUMN deleted_at timestamptz`);
    // No foreign key: the account row goes before its deletion's row does.
    await queryRunner.query(`
      CREATE TABLE account_deletions (
        id integer PRIMARY KEY,
        status varchar(16) NOT NULL DEFAULT 'running',
        events_deleted bigint NOT NULL DEFAULT 0,
        lease_owner varchar(64),
        heartbeat_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        error text,
        CONSTRAINT account_deletions_status_check CHECK (status IN ('running', 'done', 'failed'))
      )`);
    await queryRunner.query(`CREATE INDEX account_deletions_running_idx ON account_deletions (heartbeat_at) WHERE status = 'running'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS account_deletions`);
    await queryRunner.query(`ALTER TABLE accounts DROP COLUMN deleted_at`);
    await queryRunner.query(`ALTER TABLE callback_settings DROP COLUMN redacted_through_seq, DROP COLUMN redaction_fields`);
    await queryRunner.query(`DROP TABLE IF EXISTS erasure_tasks`);
    await queryRunner.query(`DROP INDEX IF EXISTS events_subject_idx`);
    await queryRunner.query(`ALTER TABLE events DROP COLUMN erased`);
  }
}
