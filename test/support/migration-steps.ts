import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, DAY_MS, ensureDatabase, MIGRATIONS, seqAt } from '@app/persistence/testing';

/**
 * A database of a suite's own for migrating by hand: built at an older migration, written the way the
 * service wrote it then, migrated up and down one migration at a time.
 */
export class MigrationDatabase {
  readonly databaseName: string;
  readonly databaseUrl: string;
  private readonly base: URL;

  constructor(label: string) {
    this.base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    this.databaseName = `${this.base.pathname.slice(1)}_${label}`;
    this.databaseUrl = Object.assign(new URL(this.base.toString()), { pathname: `/${this.databaseName}` }).toString();
  }

  async drop(): Promise<void> {
    const client = new Client({ connectionString: Object.assign(new URL(this.base.toString()), { pathname: '/postgres' }).toString() });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS "${this.databaseName}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }

  /** A fresh database with the migrations up to and including `name` applied (`npm run migrate` of that release, without its partitions). */
  async createAt(name: string): Promise<void> {
    const upTo = MIGRATIONS.findIndex((migration) => migration.name === name);
    if (upTo < 0) throw new Error(`no migration ${name}`);
    await this.drop();
    await ensureDatabase(this.databaseUrl);
    await this.withDataSource(MIGRATIONS.slice(0, upTo + 1), async (dataSource) => {
      await dataSource.runMigrations({ transaction: 'each' });
    });
  }

  /** Applies every pending migration (up to and including `upTo` when given, so later migrations do not change a test of one); answers their names. */
  async up(upTo?: string): Promise<string[]> {
    const last = upTo === undefined ? MIGRATIONS.length - 1 : MIGRATIONS.findIndex((migration) => migration.name === upTo);
    if (last < 0) throw new Error(`no migration ${upTo}`);
    return this.withDataSource(MIGRATIONS.slice(0, last + 1), async (dataSource) => (await dataSource.runMigrations({ transaction: 'each' })).map((migration) => migration.name));
  }

  /** Reverts the last applied migration (its down, in one transaction). */
  async down(): Promise<void> {
    await this.withDataSource(MIGRATIONS, (dataSource) => dataSource.undoLastMigration({ transaction: 'each' }));
  }

  /** Reverts the applied migrations from the last one back to `name`, that one included, each in its own transaction. */
  async downThrough(name: string): Promise<void> {
    const index = MIGRATIONS.findIndex((migration) => migration.name === name);
    if (index < 0) throw new Error(`no migration ${name}`);
    await this.withDataSource(MIGRATIONS, async (dataSource) => {
      for (let left = MIGRATIONS.length - index; left > 0; left -= 1) await dataSource.undoLastMigration({ transaction: 'each' });
    });
  }

  private async withDataSource<T>(migrations: (typeof MIGRATIONS)[number][], work: (dataSource: DataSource) => Promise<T>): Promise<T> {
    const dataSource = new DataSource({ ...buildDataSourceOptions(this.databaseUrl, { poolSize: 1, queryTimeoutMs: 0 }), migrations });
    await dataSource.initialize();
    try {
      return await work(dataSource);
    } finally {
      await dataSource.destroy();
    }
  }
}

/**
 * One UTC day's partitions of `tables` as the partition job made them before the one delivery model
 * (a plain table shaped like the parent, then ATTACH, which names each partition's indexes after it).
 */
export async function createDayPartitionsAsBefore(db: Client, dayStartMs: number, tables: readonly string[]): Promise<void> {
  const suffix = new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '');
  for (const table of tables) {
    const name = `${table}_p${suffix}`;
    await db.query(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await db.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${seqAt(dayStartMs)}) TO (${seqAt(dayStartMs + DAY_MS)})`);
  }
}
