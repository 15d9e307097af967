import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Destinations (CONTRACT §11): an account's extra places to deliver to, beside the primary push_url.
 *
 * - `destinations`: one row per extra destination. `target`, `auth` and `signing_secret` are sealed by
 *   SecretBox (the URL may hold a password); `target_shown` is the target with any password replaced by
 *   `***`, for views. Deleting is soft (`deleted_at`): deliveries and attempts keep the id.
 * - `callback_settings.paused`: the primary's pause (the destinations' own is `destinations.paused`).
 * - `destination_deliveries`: one row per (event, extra destination) that takes the event, written by
 *   ingest in the event's own transaction. Partitioned by event_seq per UTC day like delivery_attempts,
 *   so retention drops a day's deliveries with its events; daily partitions are made by migrate and the
 *   worker's partition job (PARTITIONED_TABLES), rows arriving before them land in the default one.
 * - `delivery_attempts.destination_id`: the destination an attempt was for; null is the primary.
 */
export class Destinations1765100000000 implements MigrationInterface {
  name = 'Destinations1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE destinations (
        id varchar(32) PRIMARY KEY,
        account_id integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type varchar(16) NOT NULL CONSTRAINT destinations_type_check CHECK (type IN ('webhook', 'rabbitmq', 'nats', 'mqtt')),
        target text NOT NULL,
        target_shown text NOT NULL,
        actions text[],
        filter jsonb,
        content_type varchar(64) NOT NULL DEFAULT 'JSON',
        format varchar(16) NOT NULL DEFAULT 'udesk' CONSTRAINT destinations_format_check CHECK (format IN ('udesk', 'cloudevents')),
        auth text,
        auth_type varchar(16),
        ordering varchar(16) NOT NULL DEFAULT 'none',
        max_per_second integer,
        paused boolean NOT NULL DEFAULT false,
        signing_secret text NOT NULL,
        failing_since timestamptz,
        disabled_at timestamptz,
        disabled_reason text,
        deleted_at timestamptz,
        version integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX destinations_account_idx ON destinations (account_id) WHERE deleted_at IS NULL`);
    await queryRunner.query(`ALTER TABLE callback_settings ADD COLUMN paused boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE TABLE destination_deliveries (
        event_seq bigint NOT NULL,
        destination_id varchar(32) NOT NULL,
        account_id integer NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'queued',
        attempts integer NOT NULL DEFAULT 0,
        series integer NOT NULL DEFAULT 0,
        series_attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        delivered_at timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (event_seq, destination_id)
      ) PARTITION BY RANGE (event_seq)`);
    // Resume and the destination's deletion walk its pending deliveries in seq order.
    await queryRunner.query(
      `CREATE INDEX destination_deliveries_pending_idx ON destination_deliveries (destination_id, event_seq) WHERE status IN ('queued', 'retrying')`,
    );
    // The reconciler's scan of pending deliveries whose time has passed, as events_pending_due_idx for events.
    await queryRunner.query(
      `CREATE INDEX destination_deliveries_pending_due_idx ON destination_deliveries (next_attempt_at) WHERE status IN ('queued', 'retrying')`,
    );
    await queryRunner.query(`CREATE TABLE destination_deliveries_default PARTITION OF destination_deliveries DEFAULT`);
    await queryRunner.query(`ALTER TABLE delivery_attempts ADD COLUMN destination_id varchar(32)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE delivery_attempts DROP COLUMN destination_id`);
    await queryRunner.query(`DROP TABLE IF EXISTS destination_deliveries`);
    await queryRunner.query(`ALTER TABLE callback_settings DROP COLUMN paused`);
    await queryRunner.query(`DROP TABLE IF EXISTS destinations`);
  }
}
