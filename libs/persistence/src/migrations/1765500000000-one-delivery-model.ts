import type { MigrationInterface, QueryRunner } from 'typeorm';
import { FOLD_BOOKS } from '../stats/books.statements';
import { CLAIM_EVENT_KEYS_FUNCTION } from './1764500000000-event-keys-per-statement';

/**
 * One delivery model (docs/delivery-model.md), in place and reversible:
 *
 * - Every account gets the destination `primary` in `destinations` (the key becomes (account_id, id)),
 *   made from its callback settings (push URL, content type, ordering, pace, pause, failure clock and
 *   disabling) and its signing secrets. `callback_settings` keeps what belongs to the account:
 *   permissions, redaction. The push URL moves as it was stored (plaintext); `secrets:rotate` seals it
 *   like any value from before encryption, and the apps read it either way.
 * - `destination_deliveries` becomes `deliveries` (its partitions renamed with it) and takes one row per
 *   event for the primary, carrying the state the event row held. No index of it names a column an
 *   outcome changes, so outcomes are HOT updates; its partitions keep a fill factor of 80 for them.
 * - `events` loses the delivery state (status, attempts, series, due time, last error) and every index
 *   over it, and the triggers that kept the keys and the tallies: the statements that write events keep
 *   their books themselves (`book_entries`, folded by the worker).
 * - `delivery_attempts` names the primary like any destination, and keeps the body's encoding instead
 *   of the body (rebuilt on read from the event's message); rows from before keep the body they stored.
 * - `open_deliveries`: the deliveries something other than their job must find (retries, holds,
 *   subject order), with what finds them; every delivery still pending when this runs gets one.
 * - Retry policy and deadline per destination (`retry_schedule_ms`, `stop_on`, `disable_on`,
 *   `expire_after_ms`) and the final status `expired`.
 */
export class OneDeliveryModel1765500000000 implements MigrationInterface {
  name = 'OneDeliveryModel1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string): Promise<unknown> => queryRunner.query(sql);
    await this.destinationsUp(q);
    await this.deliveriesUp(queryRunner);
    await this.eventsUp(q);
    await this.attemptsUp(q);
    await this.openDeliveriesUp(q);
    await this.booksUp(q);
    await this.subjectsUp(q, true);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string): Promise<unknown> => queryRunner.query(sql);
    await this.subjectsUp(q, false);
    // The entries the folder has not folded yet go into the tallies and rollups first: the old triggers go on from those.
    await q(FOLD_BOOKS.text);
    await q(`DROP TABLE IF EXISTS book_entries`);
    await q(`DROP FUNCTION IF EXISTS format_duration_ms(bigint)`);
    await q(`DROP TABLE IF EXISTS delivery_sweep`);
    await q(`DROP TABLE IF EXISTS open_deliveries`);
    await this.attemptsDown(q);
    await this.eventsDown(q);
    await this.deliveriesDown(queryRunner);
    await this.destinationsDown(q);
  }

  private async destinationsUp(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`ALTER TABLE destinations DROP CONSTRAINT destinations_pkey`);
    await q(`ALTER TABLE destinations ADD PRIMARY KEY (account_id, id)`);
    await q(`
      ALTER TABLE destinations
        ALTER COLUMN target DROP NOT NULL,
        ALTER COLUMN target_shown DROP NOT NULL,
        ADD COLUMN previous_signing_secret text,
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD COLUMN retry_schedule_ms integer[],
        ADD COLUMN stop_on integer[] NOT NULL DEFAULT '{}',
        ADD COLUMN disable_on integer[] NOT NULL DEFAULT '{}',
        ADD COLUMN expire_after_ms bigint,
        ADD CONSTRAINT destinations_target_check CHECK (target IS NOT NULL OR id = 'primary'),
        ADD CONSTRAINT destinations_ordering_check CHECK (ordering IN ('none', 'subject')),
        ADD CONSTRAINT destinations_max_per_second_check CHECK (max_per_second BETWEEN 1 AND 10000)`);
    // The push URL is shown as the account set it (its own, as push_settings always showed it).
    await q(`
      INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, ordering, max_per_second,
                                paused, signing_secret, previous_signing_secret, previous_secret_expires_at,
                                failing_since, disabled_at, disabled_reason, version, created_at, updated_at)
      SELECT 'primary', a.id, 'webhook', s.push_url, s.push_url,
             COALESCE(s.push_content_type, 'application/x-www-form-urlencoded'), 'udesk',
             COALESCE(s.delivery_ordering, 'none'), s.max_per_second, COALESCE(s.paused, false),
             a.signing_secret, a.previous_signing_secret, a.previous_secret_expires_at,
             s.failing_since, s.disabled_at, s.disabled_reason, COALESCE(s.version, 0), a.created_at, COALESCE(s.updated_at, a.created_at)
        FROM accounts a
        LEFT JOIN callback_settings s ON s.account_id = a.id`);
    await q(`
      ALTER TABLE callback_settings
        DROP COLUMN push_url, DROP COLUMN push_content_type, DROP COLUMN failing_since, DROP COLUMN disabled_at,
        DROP COLUMN disabled_reason, DROP COLUMN delivery_ordering, DROP COLUMN max_per_second, DROP COLUMN paused`);
    await q(`ALTER TABLE accounts DROP COLUMN signing_secret, DROP COLUMN previous_signing_secret, DROP COLUMN previous_secret_expires_at`);
    // The console lists troubled endpoints (breaker or disabled) across accounts.
    await q(`CREATE INDEX destinations_disabled_idx ON destinations (disabled_at DESC) WHERE disabled_at IS NOT NULL`);
  }

  private async destinationsDown(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`DROP INDEX IF EXISTS destinations_disabled_idx`);
    await q(`ALTER TABLE accounts ADD COLUMN signing_secret text, ADD COLUMN previous_signing_secret text, ADD COLUMN previous_secret_expires_at timestamptz`);
    await q(`
      ALTER TABLE callback_settings
        ADD COLUMN push_url text, ADD COLUMN push_content_type varchar(64) NOT NULL DEFAULT 'application/x-www-form-urlencoded',
        ADD COLUMN failing_since timestamptz, ADD COLUMN disabled_at timestamptz, ADD COLUMN disabled_reason text,
        ADD COLUMN delivery_ordering varchar(16) NOT NULL DEFAULT 'none'
          CONSTRAINT callback_settings_delivery_ordering_check CHECK (delivery_ordering IN ('none', 'subject')),
        ADD COLUMN max_per_second integer CONSTRAINT callback_settings_max_per_second_check CHECK (max_per_second >= 1 AND max_per_second <= 10000),
        ADD COLUMN paused boolean NOT NULL DEFAULT false`);
    await q(`
      UPDATE accounts a SET signing_secret = p.signing_secret, previous_signing_secret = p.previous_signing_secret,
                            previous_secret_expires_at = p.previous_secret_expires_at
        FROM destinations p WHERE p.account_id = a.id AND p.id = 'primary'`);
    // Accounts that never had callback settings got a primary all the same; settings rows come back only where they differ from the defaults.
    await q(`
      INSERT INTO callback_settings (account_id) SELECT p.account_id FROM destinations p
       WHERE p.id = 'primary' AND (p.target IS NOT NULL OR p.paused OR p.ordering <> 'none' OR p.max_per_second IS NOT NULL
             OR p.content_type <> 'application/x-www-form-urlencoded' OR p.disabled_at IS NOT NULL OR p.failing_since IS NOT NULL)
      ON CONFLICT (account_id) DO NOTHING`);
    await q(`
      UPDATE callback_settings s
         SET push_url = p.target, push_content_type = p.content_type, failing_since = p.failing_since, disabled_at = p.disabled_at,
             disabled_reason = p.disabled_reason, delivery_ordering = p.ordering, max_per_second = p.max_per_second, paused = p.paused
        FROM destinations p WHERE p.account_id = s.account_id AND p.id = 'primary'`);
    await q(`ALTER TABLE accounts ALTER COLUMN signing_secret SET NOT NULL`);
    // Dropped with disabled_at by the up (1763761200000's index of troubled endpoints).
    await q(`CREATE INDEX callback_settings_disabled_idx ON callback_settings (disabled_at DESC) WHERE disabled_at IS NOT NULL`);
    await q(`DELETE FROM destinations WHERE id = 'primary'`);
    await q(`
      ALTER TABLE destinations
        DROP CONSTRAINT destinations_target_check, DROP CONSTRAINT destinations_ordering_check,
        DROP CONSTRAINT destinations_max_per_second_check,
        DROP COLUMN previous_signing_secret, DROP COLUMN previous_secret_expires_at, DROP COLUMN retry_schedule_ms,
        DROP COLUMN stop_on, DROP COLUMN disable_on, DROP COLUMN expire_after_ms,
        ALTER COLUMN target SET NOT NULL, ALTER COLUMN target_shown SET NOT NULL`);
    await q(`ALTER TABLE destinations DROP CONSTRAINT destinations_pkey`);
    await q(`ALTER TABLE destinations ADD PRIMARY KEY (id)`);
  }

  private async deliveriesUp(runner: QueryRunner): Promise<void> {
    const q = (sql: string): Promise<unknown> => runner.query(sql);
    await q(`ALTER TABLE destination_deliveries RENAME TO deliveries`);
    for (const { name } of await partitionsOf(runner, 'deliveries')) {
      const renamed = name.replace(/^destination_deliveries_/, 'deliveries_');
      if (renamed !== name) await q(`ALTER TABLE ${name} RENAME TO ${renamed}`);
      await q(`ALTER TABLE ${renamed} SET (fillfactor = 80)`);
    }
    await q(`ALTER INDEX destination_deliveries_pkey RENAME TO deliveries_pkey`);
    await q(`DROP INDEX IF EXISTS destination_deliveries_pending_idx`);
    await q(`DROP INDEX IF EXISTS destination_deliveries_pending_due_idx`);
    await q(`DROP INDEX IF EXISTS destination_deliveries_failed_idx`);
    await q(`ALTER TABLE deliveries DROP CONSTRAINT destination_deliveries_status_check`);
    await q(`
      ALTER TABLE deliveries
        DROP COLUMN created_at,
        ADD COLUMN expires_at timestamptz,
        ADD CONSTRAINT deliveries_status_check
          CHECK (status IN ('queued', 'retrying', 'delivered', 'failed', 'expired', 'filtered', 'no_endpoint'))`);
    await q(`
      INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts,
                              next_attempt_at, delivered_at, last_error, updated_at)
      SELECT seq, 'primary', account_id, status, attempts, series, series_attempts, next_attempt_at, delivered_at, last_error, updated_at
        FROM events`);
  }

  private async deliveriesDown(runner: QueryRunner): Promise<void> {
    const q = (sql: string): Promise<unknown> => runner.query(sql);
    await q(`DELETE FROM deliveries WHERE destination_id = 'primary'`);
    await q(`UPDATE deliveries SET status = 'failed' WHERE status = 'expired'`);
    await q(`ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check`);
    await q(`
      ALTER TABLE deliveries
        DROP COLUMN expires_at,
        ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
        ADD CONSTRAINT destination_deliveries_status_check
          CHECK (status IN ('queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'))`);
    // Ingest stored a delivery in its event's statement, so its created_at was the event's.
    await q(`UPDATE deliveries d SET created_at = e.created_at FROM events e WHERE e.seq = d.event_seq`);
    await q(`ALTER INDEX deliveries_pkey RENAME TO destination_deliveries_pkey`);
    for (const { name } of await partitionsOf(runner, 'deliveries')) {
      await q(`ALTER TABLE ${name} RESET (fillfactor)`);
      await q(`ALTER TABLE ${name} RENAME TO ${name.replace(/^deliveries_/, 'destination_deliveries_')}`);
    }
    await q(`ALTER TABLE deliveries RENAME TO destination_deliveries`);
    await q(`CREATE INDEX destination_deliveries_pending_idx ON destination_deliveries (destination_id, event_seq) WHERE status IN ('queued', 'retrying')`);
    await q(`CREATE INDEX destination_deliveries_pending_due_idx ON destination_deliveries (next_attempt_at) WHERE status IN ('queued', 'retrying')`);
    await q(`CREATE INDEX destination_deliveries_failed_idx ON destination_deliveries (account_id, event_seq) WHERE status = 'failed'`);
  }

  private async eventsUp(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`DROP TRIGGER IF EXISTS events_claim_event_keys ON events`);
    await q(`DROP TRIGGER IF EXISTS events_tally_insert ON events`);
    await q(`DROP TRIGGER IF EXISTS events_tally_update ON events`);
    await q(`DROP TRIGGER IF EXISTS events_tally_delete ON events`);
    await q(`DROP TRIGGER IF EXISTS events_tally_truncate ON events`);
    await q(`DROP FUNCTION IF EXISTS claim_event_keys()`);
    for (const index of ['events_account_status_seq_idx', 'events_status_seq_idx', 'events_pending_due_idx', 'events_pending_subject_idx']) {
      await q(`DROP INDEX IF EXISTS ${index}`);
    }
    await q(`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_status_check`);
    await q(`
      ALTER TABLE events
        DROP COLUMN status, DROP COLUMN attempts, DROP COLUMN series, DROP COLUMN series_attempts,
        DROP COLUMN next_attempt_at, DROP COLUMN updated_at, DROP COLUMN delivered_at, DROP COLUMN last_error`);
  }

  private async eventsDown(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`
      ALTER TABLE events
        ADD COLUMN status varchar(16) NOT NULL DEFAULT 'queued',
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN series integer NOT NULL DEFAULT 0,
        ADD COLUMN series_attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN next_attempt_at timestamptz,
        ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN delivered_at timestamptz,
        ADD COLUMN last_error text`);
    await q(`
      UPDATE events e
         SET status = CASE WHEN d.status = 'expired' THEN 'failed' ELSE d.status END, attempts = d.attempts, series = d.series,
             series_attempts = d.series_attempts, next_attempt_at = d.next_attempt_at, updated_at = d.updated_at,
             delivered_at = d.delivered_at, last_error = d.last_error
        FROM deliveries d WHERE d.event_seq = e.seq AND d.destination_id = 'primary'`);
    await q(`
      ALTER TABLE events ADD CONSTRAINT events_status_check
        CHECK (status IN ('queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'))`);
    await q(`CREATE INDEX events_account_status_seq_idx ON events (account_id, status, seq DESC)`);
    await q(`CREATE INDEX events_status_seq_idx ON events (status, seq DESC)`);
    // Written as 1764200000000 carried it over from the plain table (pg_get_indexdef of 1763700000000's index).
    await q(
      `CREATE INDEX events_pending_due_idx ON events (next_attempt_at)
        WHERE ((status)::text = ANY (ARRAY[('queued'::character varying)::text, ('retrying'::character varying)::text]))`,
    );
    await q(`
      CREATE INDEX events_pending_subject_idx ON events (account_id, callback_subject(action, message), seq)
       WHERE status IN ('queued', 'retrying') AND series = 0`);
    // The triggers are those of migrations 1764400000000 and 1764500000000 as 1765400000000 left them.
    // claim_event_keys() exactly as 1764500000000 wrote it (a taken id is refused as `event_id … is already taken` on event_keys_pkey).
    await q(CLAIM_EVENT_KEYS_FUNCTION);
    const skip = `WHEN (current_setting('app.event_books_kept_at', true) IS DISTINCT FROM statement_timestamp()::text)`;
    await q(`CREATE TRIGGER events_claim_event_keys AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT ${skip} EXECUTE FUNCTION claim_event_keys()`);
    await q(`CREATE TRIGGER events_tally_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT ${skip} EXECUTE FUNCTION tally_event_changes()`);
    await q(`CREATE TRIGGER events_tally_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tally_event_changes()`);
    await q(`CREATE TRIGGER events_tally_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tally_event_changes()`);
    await q(`CREATE TRIGGER events_tally_truncate AFTER TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION clear_event_tallies()`);
  }

  private async attemptsUp(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`UPDATE delivery_attempts SET destination_id = 'primary' WHERE destination_id IS NULL`);
    await q(`
      ALTER TABLE delivery_attempts
        ALTER COLUMN destination_id SET NOT NULL,
        ALTER COLUMN request_body DROP NOT NULL,
        ADD COLUMN encoding varchar(16) CONSTRAINT delivery_attempts_encoding_check CHECK (encoding IN ('json', 'form', 'cloudevents'))`);
  }

  private async attemptsDown(q: (sql: string) => Promise<unknown>): Promise<void> {
    // The bodies an attempt did not store are rebuilt by the apps on read; going back keeps them empty.
    await q(`UPDATE delivery_attempts SET request_body = '' WHERE request_body IS NULL`);
    await q(`ALTER TABLE delivery_attempts DROP COLUMN encoding, ALTER COLUMN request_body SET NOT NULL, ALTER COLUMN destination_id DROP NOT NULL`);
    await q(`UPDATE delivery_attempts SET destination_id = NULL WHERE destination_id = 'primary'`);
  }

  private async openDeliveriesUp(q: (sql: string) => Promise<unknown>): Promise<void> {
    await q(`
      CREATE TABLE open_deliveries (
        event_seq bigint NOT NULL,
        destination_id varchar(32) NOT NULL,
        account_id integer NOT NULL,
        subject text,
        due_at timestamptz,
        held varchar(16) CONSTRAINT open_deliveries_held_check CHECK (held IN ('paused', 'breaker')),
        expires_at timestamptz,
        PRIMARY KEY (event_seq, destination_id)
      )`);
    await q(`CREATE INDEX open_deliveries_subject_idx ON open_deliveries (account_id, destination_id, subject, event_seq) WHERE subject IS NOT NULL`);
    await q(`CREATE INDEX open_deliveries_due_idx ON open_deliveries (due_at) WHERE held IS NULL AND due_at IS NOT NULL`);
    await q(`CREATE INDEX open_deliveries_held_idx ON open_deliveries (held, account_id, destination_id, event_seq) WHERE held IS NOT NULL`);
    await q(`CREATE INDEX open_deliveries_expiry_idx ON open_deliveries (expires_at) WHERE expires_at IS NOT NULL`);
    // A destination's open deliveries: ended together when it is deleted.
    await q(`CREATE INDEX open_deliveries_destination_idx ON open_deliveries (account_id, destination_id, event_seq)`);
    // Where the sweep for fresh deliveries whose job was lost goes on from (docs/delivery-model.md), one row.
    await q(`
      CREATE TABLE delivery_sweep (
        id smallint PRIMARY KEY DEFAULT 1 CONSTRAINT delivery_sweep_one_row CHECK (id = 1),
        position bigint NOT NULL DEFAULT 0,
        cycle_floor bigint
      )`);
    await q(`INSERT INTO delivery_sweep (position) SELECT COALESCE(max(seq), 0) FROM events`);
    // Every delivery still pending: paused ones (no due time, destination paused) held, the others due.
    await q(`
      INSERT INTO open_deliveries (event_seq, destination_id, account_id, subject, due_at, held)
      SELECT d.event_seq, d.destination_id, d.account_id,
             CASE WHEN x.ordering = 'subject' AND d.series = 0 THEN callback_subject(e.action, e.message) END,
             CASE WHEN d.next_attempt_at IS NULL AND x.paused THEN NULL ELSE COALESCE(d.next_attempt_at, now()) END,
             CASE WHEN d.next_attempt_at IS NULL AND x.paused THEN 'paused' END
        FROM deliveries d
        JOIN events e ON e.seq = d.event_seq
        LEFT JOIN destinations x ON x.account_id = d.account_id AND x.id = d.destination_id
       WHERE d.status IN ('queued', 'retrying')`);
  }

  /** The service's own events about a destination (CONTRACT §14) have the subject `destination:<id>`. */
  private async subjectsUp(q: (sql: string) => Promise<unknown>, withDestinations: boolean): Promise<void> {
    await q(`
      CREATE OR REPLACE FUNCTION callback_subject(action text, message json) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN action LIKE 'Customer\\_%' THEN 'customer:' || (message->>'id')
          WHEN action LIKE 'Organization\\_%' THEN 'organization:' || (message->>'id')
          WHEN action LIKE 'ImSubSession\\_%' THEN 'sub_session:' || (message->>'id')
          WHEN action = 'AgentNote_update' THEN COALESCE('sub_session:' || (message->>'sub_session_id'), 'conversation:' || (message->>'conversation_id'))
          WHEN action = 'ImSurveyVote_create' THEN 'sub_session:' || (message->>'sub_session_id')
          WHEN action = 'ShutQueue_create' THEN 'customer:' || (message->>'customer_id')
          ${withDestinations ? "WHEN action LIKE 'Destination\\_%' THEN 'destination:' || (message->>'destination_id')" : ''}
        END
      $$`);
  }

  private async booksUp(q: (sql: string) => Promise<unknown>): Promise<void> {
    // `300000` → `5m`: a duration as the settings and the API write it, for last_error texts.
    await q(`
      CREATE FUNCTION format_duration_ms(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN ms IS NULL THEN NULL
          WHEN ms > 0 AND ms % 86400000 = 0 THEN (ms / 86400000) || 'd'
          WHEN ms > 0 AND ms % 3600000 = 0 THEN (ms / 3600000) || 'h'
          WHEN ms > 0 AND ms % 60000 = 0 THEN (ms / 60000) || 'm'
          WHEN ms > 0 AND ms % 1000 = 0 THEN (ms / 1000) || 's'
          ELSE ms || 'ms'
        END
      $$`);
    // Append-only: what a statement changed in the event tallies and the delivery rollups, one row per
    // change; the worker folds it into both every few seconds, and readers add what is not folded yet.
    // `tallied`: the change is the primary's, so it counts in the event tallies too (an event's status is
    // its primary's); every destination's outcomes count in the rollups.
    await q(`
      CREATE TABLE book_entries (
        account_id integer NOT NULL,
        created_at timestamptz NOT NULL,
        from_status varchar(16),
        to_status varchar(16),
        events integer NOT NULL DEFAULT 1,
        attempted smallint NOT NULL DEFAULT 0,
        delivered_at timestamptz,
        at timestamptz NOT NULL DEFAULT now(),
        tallied boolean NOT NULL DEFAULT true
      )`);
  }
}

async function partitionsOf(runner: QueryRunner, table: string): Promise<{ name: string }[]> {
  return (await runner.query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1`,
    [table],
  )) as { name: string }[];
}
