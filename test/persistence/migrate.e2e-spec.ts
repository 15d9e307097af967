import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { createDataSource, DEFAULT_PARTITIONS_AHEAD_DAYS, MIGRATIONS } from '@app/persistence/testing';
import { requireBuiltFile } from '../support/built-app';
import { dropDatabase } from '../support/worker-databases';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const ROOT = resolve(__dirname, '..', '..');
/** The bound is for a hang, not a speed check: a test makes up to two runs, on a loaded machine too. */
const MIGRATE_TIMEOUT_MS = 180_000;
const BUILT_MIGRATE = join(ROOT, 'dist', 'scripts', 'migrate.js');

/** The real `migrate` command: the built script `npm run migrate` runs (`npm run build` first). */
function migrate(databaseUrl: string, extraEnv: Record<string, string | undefined> = {}): Promise<Run> {
  requireBuiltFile(BUILT_MIGRATE);
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [BUILT_MIGRATE],
      { cwd: ROOT, env: { ...process.env, ...extraEnv, DATABASE_URL: databaseUrl } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A database name of its own (under the run's prefix, so the global teardown pattern recognises it). */
function freshDatabaseUrl(label: string): string {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `${url.pathname}_${label}`;
  return url.toString();
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

/** Today, the days ahead and the default partition. */
const DAYS_AHEAD = DEFAULT_PARTITIONS_AHEAD_DAYS;

async function partitions(databaseUrl: string, table: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
      [table],
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

/** Each index on the partitioned events and delivery_attempts tables and their partitions, as `table: definition` without the index name. */
async function eventIndexDefinitions(databaseUrl: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ definition: string }>(
      `SELECT tablename || ': ' || regexp_replace(indexdef, '^CREATE (UNIQUE )?INDEX \\S+ ON (ONLY )?\\S+ ', '') AS definition
         FROM pg_indexes WHERE tablename ~ '^(events|delivery_attempts)(_|$)' ORDER BY 1`,
    );
    return rows.map((row) => row.definition);
  } finally {
    await client.end();
  }
}

/** Reverts the migration named and every one after it (their down() runs, newest first); answers its index. */
async function revertThrough(databaseUrl: string, name: string): Promise<number> {
  const at = MIGRATIONS.findIndex((migration) => migration.name === name);
  const dataSource = createDataSource(databaseUrl, { poolSize: 1, queryTimeoutMs: 0 });
  await dataSource.initialize();
  try {
    for (let undone = MIGRATIONS.length; undone > at; undone -= 1) await dataSource.undoLastMigration({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
  return at;
}

describe('npm run migrate (scripts/migrate.ts)', () => {
  const created: string[] = [];
  /** A database name of its own, dropped if a run before left it, and dropped again after the suite. */
  async function emptyDatabase(label: string): Promise<string> {
    const databaseUrl = freshDatabaseUrl(label);
    created.push(databaseUrl);
    await dropDatabase(databaseUrl);
    return databaseUrl;
  }
  afterAll(async () => {
    for (const databaseUrl of created) await dropDatabase(databaseUrl);
  });

  it('creates the database and applies the migrations, then says it is up to date', async () => {
    const databaseUrl = await emptyDatabase('migrate_twice');

    const first = await migrate(databaseUrl);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/created database/);
    expect(first.stdout).toMatch(/applied InitialSchema\d+/);

    const second = await migrate(databaseUrl);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toMatch(/is up to date/);
    expect(second.stdout).not.toMatch(/created database|applied/);

    expect(await appliedMigrations(databaseUrl)).toEqual(MIGRATIONS.map((migration) => migration.name));
    // A fresh install can take events at once: today's partition and the days ahead exist.
    expect(await partitions(databaseUrl, 'events')).toHaveLength(DAYS_AHEAD + 2);
  }, MIGRATE_TIMEOUT_MS);

  it('lets two runs at once both succeed and apply each migration once', async () => {
    const databaseUrl = await emptyDatabase('migrate_race');

    const runs = await Promise.all([migrate(databaseUrl), migrate(databaseUrl)]);
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(runs.filter((run) => /applied InitialSchema/.test(run.stdout))).toHaveLength(1);
    expect(await appliedMigrations(databaseUrl)).toHaveLength(MIGRATIONS.length);
    expect(await partitions(databaseUrl, 'events')).toHaveLength(DAYS_AHEAD + 2);
  }, MIGRATE_TIMEOUT_MS);

  it('needs only the database settings, as a production migrate job has no API tokens', async () => {
    const databaseUrl = await emptyDatabase('migrate_production');
    const run = await migrate(databaseUrl, { NODE_ENV: 'production', ADMIN_TOKEN: undefined, INGEST_TOKEN: undefined, RETRY_SCHEDULE: 'nonsense' });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await appliedMigrations(databaseUrl)).toHaveLength(MIGRATIONS.length);
  }, MIGRATE_TIMEOUT_MS);

  it('drops the indexes no query uses (1765000000000), on every partition, and puts them back when reverted', async () => {
    const databaseUrl = await emptyDatabase('migrate_lean_indexes');
    expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
    const lean = await eventIndexDefinitions(databaseUrl);
    const unused = /: USING btree \((event_id|event_seq, attempt|started_at)\)$/;
    expect(lean.filter((definition) => unused.test(definition))).toEqual([]);
    // What the lists, search, feed, retention and erasure read stays, on the parent and each partition.
    // (The search's index is the message's scalars since 1766000000000, which the revert below undoes too.)
    for (const kept of ['events: USING btree (seq)', 'events: USING gin (message_scalars(message) jsonb_path_ops)', 'delivery_attempts: USING btree (event_seq, id)']) {
      expect(lean).toContain(kept);
    }
    expect(lean.filter((definition) => definition.endsWith(': USING btree (account_id, seq DESC)'))).toHaveLength(DAYS_AHEAD + 3);

    // Reverted with every migration after it (their down() runs too).
    const leanAt = await revertThrough(databaseUrl, 'LeanEventIndexes1765000000000');
    const restored = await eventIndexDefinitions(databaseUrl);
    // The parent and each of its partitions (today, the days ahead, the default) have the three again.
    expect(restored.filter((definition) => unused.test(definition))).toHaveLength(3 * (DAYS_AHEAD + 3));
    expect(await appliedMigrations(databaseUrl)).toEqual(MIGRATIONS.slice(0, leanAt).map((migration) => migration.name));
  }, MIGRATE_TIMEOUT_MS);

  it('forgets the keys below the oldest event and drops event_keys_seq_idx (1766100000000), which a revert puts back', async () => {
    const databaseUrl = await emptyDatabase('migrate_event_keys');
    expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
    const keyIndexes = async (client: Client) =>
      (await client.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'event_keys' ORDER BY 1`)).rows.map((row) => row.indexname);
    const keyIds = async (client: Client) =>
      (await client.query<{ event_id: string }>(`SELECT event_id FROM event_keys ORDER BY event_id`)).rows.map((row) => row.event_id);
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      expect(await keyIndexes(client)).toEqual(['event_keys_pkey']);
      await revertThrough(databaseUrl, 'EventKeysWithoutSeqIndex1766100000000');
      expect(await keyIndexes(client)).toEqual(['event_keys_pkey', 'event_keys_seq_idx']);

      // A stored event with its key, and the key of an event of a day dropped before the sweep reached it.
      const { rows } = await client.query<{ seq: string }>(
        `WITH account AS (INSERT INTO accounts (email, open_api_token) VALUES ('keys@example.com', 'sealed') RETURNING id)
         INSERT INTO events (event_id, account_id, action, message) SELECT 'kept', id, 'Customer_create', '{}' FROM account RETURNING seq::text AS seq`,
      );
      await client.query(
        `INSERT INTO event_keys (event_id, account_id, event_seq) SELECT 'kept', account_id, seq FROM events
         UNION ALL SELECT 'gone', account_id, seq - 1000 FROM events`,
      );
      expect(rows).toHaveLength(1);
      expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
      expect(await keyIndexes(client)).toEqual(['event_keys_pkey']);
      expect(await keyIds(client)).toEqual(['kept']);
    } finally {
      await client.end();
    }
  }, MIGRATE_TIMEOUT_MS);

  it('takes the created_at index off the daily events partitions, the default keeping its own (1766200000000), and a revert puts it back', async () => {
    const databaseUrl = await emptyDatabase('migrate_created_at');
    expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
    const onCreatedAt = async () => (await eventIndexDefinitions(databaseUrl)).filter((definition) => definition.endsWith('USING btree (created_at)'));
    expect(await onCreatedAt()).toEqual(['events_default: USING btree (created_at)']);

    await revertThrough(databaseUrl, 'EventsCreatedAtOffDailyPartitions1766200000000');
    // The parent and each of its partitions (today, the days ahead, the default).
    expect(await onCreatedAt()).toHaveLength(DAYS_AHEAD + 3);
  }, MIGRATE_TIMEOUT_MS);

  it("drops the events' key to accounts (1766300000000) and counts new events from their rows (1766400000000); a revert brings back the key and the entries of events not counted yet", async () => {
    const databaseUrl = await emptyDatabase('migrate_accepted');
    expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    const shape = async () => {
      const { rows } = await client.query<{ keys: number; accepted: boolean; marks: boolean }>(
        `SELECT (SELECT count(*)::int FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'f') AS keys,
                EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'deliveries' AND column_name = 'first_status') AS accepted,
                to_regclass('book_marks') IS NOT NULL AS marks`,
      );
      return rows[0];
    };
    try {
      expect(await shape()).toEqual({ keys: 0, accepted: true, marks: true });
      // An event stored after the mark, not counted yet: its entry must come back with the older model.
      await client.query(
        `WITH account AS (INSERT INTO accounts (email, open_api_token) VALUES ('accepted@example.com', 'sealed') RETURNING id)
         , event AS (INSERT INTO events (event_id, account_id, action, message) SELECT 'uncounted', id, 'Customer_create', '{}' FROM account RETURNING seq, account_id)
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, first_status) SELECT seq, 'primary', account_id, 'queued', 'queued' FROM event`,
      );
      await revertThrough(databaseUrl, 'EventsWithoutAccountForeignKey1766300000000');
      expect(await shape()).toEqual({ keys: 1, accepted: false, marks: false });
      const { rows: entries } = await client.query(`SELECT from_status, to_status, events FROM book_entries`);
      expect(entries).toEqual([{ from_status: null, to_status: 'queued', events: 1 }]);

      expect(await migrate(databaseUrl)).toMatchObject({ code: 0, stderr: '' });
      expect(await shape()).toEqual({ keys: 0, accepted: true, marks: true });
    } finally {
      await client.end();
    }
  }, MIGRATE_TIMEOUT_MS);

  it('stops with exit code 1 and a clear message when the setting is malformed', async () => {
    const run = await migrate('mysql://127.0.0.1/whatever');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/DATABASE_URL/);
  }, MIGRATE_TIMEOUT_MS);
});
