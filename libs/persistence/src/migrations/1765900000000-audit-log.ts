import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AUDIT_MONTHS_AHEAD, createAuditMonthSql, monthStart } from '../partitions/audit-partitions';

/**
 * The audit log (CONTRACT §15): who did what through the admin API, the Open API and the portal, and
 * every sign-in and sign-out. Partitioned by month of `at`; a trigger refuses every UPDATE, DELETE and
 * TRUNCATE, so the only way an entry leaves is its month's partition being dropped by retention
 * (AUDIT_RETENTION_DAYS). `account_id` has no foreign key: the entries of an offboarded account stay.
 * Nothing here holds a secret, a token or a body: the columns have no room for one.
 */
export class AuditLog1765900000000 implements MigrationInterface {
  name = 'AuditLog1765900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_log (
        id bigint GENERATED ALWAYS AS IDENTITY,
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        actor text NOT NULL,
        role text CHECK (role IN ('viewer', 'operator', 'admin')),
        via text NOT NULL CHECK (via IN ('token', 'oidc', 'open_api', 'portal')),
        action text NOT NULL,
        account_id integer,
        target text,
        status smallint NOT NULL,
        ip text,
        request_id text,
        PRIMARY KEY (at, id)
      ) PARTITION BY RANGE (at)`);
    await queryRunner.query(`CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT`);
    for (let month = 0; month <= AUDIT_MONTHS_AHEAD; month += 1) await queryRunner.query(createAuditMonthSql(monthStart(Date.now(), month)));
    // Newest first, filtered by actor, action or account: each filter has its index ending in the order.
    await queryRunner.query(`CREATE INDEX audit_log_actor_idx ON audit_log (actor, at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX audit_log_action_idx ON audit_log (action, at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX audit_log_account_idx ON audit_log (account_id, at DESC, id DESC) WHERE account_id IS NOT NULL`);
    await queryRunner.query(`
      CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_log is append-only: % is refused (entries leave only with their month''s partition)', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
        FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_log`);
    await queryRunner.query(`DROP FUNCTION audit_log_append_only()`);
  }
}
