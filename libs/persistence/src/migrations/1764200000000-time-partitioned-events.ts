import type { MigrationInterface, QueryRunner } from 'typeorm';
import { legacyPartitionName, seqAt, utcDayStart, DAY_MS, type PartitionedTable } from '../partitions/partition-layout';

/** The row-level key claim of this layout; replaced by a per-statement check in 1764500000000, whose down() restores it. */
export const CLAIM_EVENT_KEY_ROW_TRIGGER_FUNCTION = `
      CREATE FUNCTION claim_event_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO event_keys (event_id, account_id, event_seq) VALUES (NEW.event_id, NEW.account_id, NEW.seq)
          ON CONFLICT (event_id) DO NOTHING;
        IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM event_keys WHERE event_id = NEW.event_id AND event_seq = NEW.seq) THEN
          RAISE unique_violation USING MESSAGE = format('event_id %s is already taken', NEW.event_id), CONSTRAINT = 'event_keys_pkey';
        END IF;
        RETURN NULL;
      END $$`;

/** Partition key and primary key of each table once partitioned (a partitioned table's keys must contain its partition key). */
type FirstPartitionedTable = Exclude<PartitionedTable, 'deliveries'>;
const LAYOUT: Record<FirstPartitionedTable, { key: string; primaryKey: string }> = {
  events: { key: 'seq', primaryKey: 'seq' },
  delivery_attempts: { key: 'event_seq', primaryKey: 'event_seq, id' },
  bot_calls: { key: 'created_at', primaryKey: 'id, created_at' },
};

interface IndexRow {
  name: string;
  definition: string;
}

/**
 * events, delivery_attempts and bot_calls become tables partitioned per UTC day (see
 * partitions/partition-layout.ts). The existing tables are not copied: each is attached as the
 * `<table>_legacy` partition covering everything before today (zero copy, seq values unchanged, so
 * queued jobs, cursors and redelivery tasks stay valid), and is trimmed by retention row by row until
 * it is empty. Every index found on the old tables, whoever added it, is recreated on the partitioned
 * table (the legacy partition's own indexes are attached to them, not rebuilt), as are CHECK and
 * foreign-key constraints, except attempts → events, which a partitioned layout cannot afford (dropping
 * a day would scan every attempt). event_id uniqueness moves to `event_keys`, kept by a trigger on
 * every insert into events, whatever the path. Daily and default partitions are created by migrate
 * right after this migration and by the worker's partition job.
 */
export class TimePartitionedEvents1764200000000 implements MigrationInterface {
  name = 'TimePartitionedEvents1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string, parameters?: unknown[]) => queryRunner.query(sql, parameters) as Promise<unknown[]>;
    // Time-ordered seq: milliseconds since the epoch, 20 bits of counter (a million ids per millisecond).
    await q(`CREATE SEQUENCE event_seq_counter AS bigint`);
    await q(`
      CREATE FUNCTION next_event_seq() RETURNS bigint LANGUAGE sql VOLATILE AS $$
        SELECT (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 20) | (nextval('event_seq_counter') & 1048575)
      $$`);

    // The attempt → event foreign key would make every partition drop scan the attempts.
    const toEvents = (await q(
      `SELECT conname AS name FROM pg_constraint
        WHERE conrelid = 'delivery_attempts'::regclass AND contype = 'f' AND confrelid = 'events'::regclass`,
    )) as { name: string }[];
    for (const { name } of toEvents) await q(`ALTER TABLE delivery_attempts DROP CONSTRAINT ${name}`);

    const todayStart = utcDayStart(Date.now());
    for (const table of ['events', 'delivery_attempts', 'bot_calls'] as const) await this.partition(queryRunner, table, todayStart);

    await q(`CREATE INDEX events_event_id_idx ON events (event_id)`);
    // The rows whose created_at strays from their seq's time (see partitions/time-window.ts): legacy rows
    // and rows written by hand. Lets the event list turn since/until into a seq range (pruned, read in
    // order) and still find these few through created_at.
    await q(
      `CREATE INDEX events_out_of_line_idx ON events (created_at)
        WHERE (created_at - to_timestamp(((seq >> 20) / 1000.0)::float8)) NOT BETWEEN interval '-1 minute' AND interval '1 minute'`,
    );
    await q(`
      CREATE TABLE event_keys (
        event_id varchar(128) PRIMARY KEY,
        account_id integer NOT NULL,
        event_seq bigint NOT NULL
      )`);
    // Retention trims keys whose event is gone, oldest seq first.
    await q(`CREATE INDEX event_keys_seq_idx ON event_keys (event_seq)`);
    await q(`INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM events`);
    // Ingest claims keys itself (ON CONFLICT tells it duplicates from conflicts); this trigger makes the
    // rule hold for every other insert too (tests, tools, moved rows) and accepts a key already claimed
    // for the same seq.
    await q(CLAIM_EVENT_KEY_ROW_TRIGGER_FUNCTION);
    await q(`CREATE TRIGGER events_claim_event_key AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION claim_event_key()`);
  }

  private async partition(queryRunner: QueryRunner, table: FirstPartitionedTable, todayStart: number): Promise<void> {
    const q = (sql: string, parameters?: unknown[]) => queryRunner.query(sql, parameters) as Promise<unknown[]>;
    const legacy = legacyPartitionName(table);
    const { key, primaryKey } = LAYOUT[table];
    const indexes = (await q(
      `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = $1::regclass AND NOT x.indisunique`,
      [table],
    )) as IndexRow[];
    const foreignKeys = (await q(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint
        WHERE conrelid = $1::regclass AND contype = 'f'`,
      [table],
    )) as IndexRow[];
    const allIndexes = (await q(`SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = $1::regclass`, [table])) as {
      name: string;
    }[];

    await q(`ALTER TABLE ${table} RENAME TO ${legacy}`);
    for (const { name } of allIndexes) await q(`ALTER INDEX ${name} RENAME TO ${name}_legacy`);

    const identity = table === 'events' ? '' : 'INCLUDING IDENTITY';
    await q(`CREATE TABLE ${table} (LIKE ${legacy} INCLUDING DEFAULTS INCLUDING CONSTRAINTS ${identity}) PARTITION BY RANGE (${key})`);
    await q(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (${primaryKey})`);
    for (const fk of foreignKeys) await q(`ALTER TABLE ${table} ADD CONSTRAINT ${fk.name} ${fk.definition}`);
    // Read before the rename, the definitions name `${table}`, which is now the partitioned table.
    for (const index of indexes) await q(index.definition);
    if (table === 'events') {
      await q(`ALTER TABLE ${legacy} ALTER COLUMN seq DROP IDENTITY IF EXISTS`);
      await q(`ALTER TABLE events ALTER COLUMN seq SET DEFAULT next_event_seq()`);
    } else {
      // New ids continue after the old ones: the bot-call list pages by id.
      const [{ next }] = (await q(`SELECT COALESCE(max(id), 0) + 1 AS next FROM ${legacy}`)) as { next: string }[];
      await q(`ALTER TABLE ${legacy} ALTER COLUMN id DROP IDENTITY IF EXISTS`);
      await q(`ALTER TABLE ${table} ALTER COLUMN id RESTART WITH ${next}`);
    }

    if (table !== 'events') {
      // The old single-column key gives way to the partitioned one, which ATTACH builds on the legacy rows.
      const [{ name }] = (await q(`SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, [legacy])) as {
        name: string;
      }[];
      await q(`ALTER TABLE ${legacy} DROP CONSTRAINT ${name}`);
    }
    const [{ empty }] = (await q(`SELECT NOT EXISTS (SELECT 1 FROM ${legacy}) AS empty`)) as { empty: boolean }[];
    if (empty) {
      await q(`DROP TABLE ${legacy}`);
    } else {
      await q(`ALTER TABLE ${table} ATTACH PARTITION ${legacy} FOR VALUES FROM (MINVALUE) TO (${await this.legacyEnd(queryRunner, table, todayStart)})`);
    }
    await q(`CREATE TABLE ${table}_default PARTITION OF ${table} DEFAULT`);
  }

  /** Where the legacy partition ends: today's first seq, or for bot calls the day after the newest row (today's rows stay there until midnight). */
  private async legacyEnd(queryRunner: QueryRunner, table: PartitionedTable, todayStart: number): Promise<string> {
    const legacy = legacyPartitionName(table);
    if (table === 'bot_calls') {
      const [{ newest }] = (await queryRunner.query(`SELECT (extract(epoch FROM max(created_at)) * 1000)::float8 AS newest FROM ${legacy}`)) as {
        newest: number;
      }[];
      return `'${new Date(Math.max(todayStart, utcDayStart(newest)) + DAY_MS).toISOString()}'`;
    }
    const end = seqAt(todayStart);
    const column = table === 'events' ? 'seq' : 'event_seq';
    const [{ highest }] = (await queryRunner.query(`SELECT max(${column})::text AS highest FROM ${legacy}`)) as { highest: string }[];
    if (BigInt(highest) >= end) throw new Error(`${legacy}.${column} reaches ${highest}, beyond the first time-ordered seq ${end}`);
    return end.toString();
  }

  down(): Promise<void> {
    // Going back would mean copying every partition into one table again: restore a backup instead.
    return Promise.reject(new Error('TimePartitionedEvents1764200000000 cannot be reverted; restore the database from a backup taken before it'));
  }
}
