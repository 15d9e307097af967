import { Client } from 'pg';
import { walByTable } from '../../bench/support/wal-by-table';

/**
 * The bench's account of WAL by relation (BENCH_WAL_BY_TABLE=1) read back from a real server: rows
 * inserted one transaction each into a partitioned table land on its root's name and its index's,
 * never on the day's partition, and each commit on the transaction resource manager.
 */
const databaseUrl = process.env.DATABASE_URL ?? '';
let db: Client;

beforeAll(async () => {
  db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query(`CREATE TABLE wal_probe (id bigint NOT NULL, note text NOT NULL) PARTITION BY RANGE (id)`);
  await db.query(`CREATE TABLE wal_probe_p1 PARTITION OF wal_probe FOR VALUES FROM (0) TO (1000)`);
  await db.query(`CREATE INDEX wal_probe_note_idx ON wal_probe (note)`);
  await db.query(`CREATE TABLE wal_probe_between (id bigint NOT NULL)`);
});

afterAll(async () => {
  await db.query('DROP TABLE IF EXISTS wal_probe, wal_probe_between');
  await db.end();
});

it('splits the WAL of a phase\'s ranges by partitioned table and index, per event, leaving out what ran between them', async () => {
  const lsn = async (): Promise<string> => (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const insert = async (from: number) => {
    for (let id = from; id < from + 25; id += 1) await db.query('INSERT INTO wal_probe VALUES ($1, $2)', [id, `note ${'x'.repeat(200)} ${id}`]);
  };
  /** The WAL positions around `work`. */
  const range = async (work: () => Promise<void>): Promise<[string, string]> => {
    const from = await lsn();
    await work();
    return [from, await lsn()];
  };
  const first = await range(() => insert(0));
  for (let id = 0; id < 25; id += 1) await db.query('INSERT INTO wal_probe_between VALUES ($1)', [id]);
  const second = await range(() => insert(25));

  const tables = await walByTable(databaseUrl, [first, second], 50);
  const named = (name: string) => tables.find((entry) => entry.table === name);

  expect(tables.some((entry) => entry.table.startsWith('wal_probe_p1'))).toBe(false);
  expect(named('wal_probe_between')).toBeUndefined();
  // A heap insert carries the row (over 200 bytes), one record an event.
  expect(named('wal_probe')?.records).toBeGreaterThanOrEqual(1);
  expect(named('wal_probe')?.bytes).toBeGreaterThan(200);
  expect(named('wal_probe_note_idx')?.records).toBeGreaterThanOrEqual(1);
  expect(named('transaction (no relation)')?.records).toBeGreaterThanOrEqual(1);
});
