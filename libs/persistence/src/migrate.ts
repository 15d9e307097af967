import { Client } from 'pg';
import { createDataSource } from './data-source';
import { DEFAULT_PARTITIONS_AHEAD_DAYS, ensureDailyPartitions } from './partitions/partition-maintenance';
import { ensureAuditPartitions } from './partitions/audit-partitions';

/** Any fixed number works: it only has to be the same in every process that migrates. */
export const MIGRATION_LOCK_KEY = 7_263_511_004;

export interface MigrationReport {
  databaseCreated: boolean;
  applied: string[];
  /** Daily partitions created (today and the days ahead), so a fresh install accepts events at once. */
  partitionsCreated: string[];
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Creates the database named in the URL when it is missing. Safe when several processes race. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const target = new URL(databaseUrl);
  const databaseName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!databaseName) throw new Error('DATABASE_URL names no database');
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(databaseName)}`);
      return true;
    } catch (error) {
      // 42P04 duplicate_database, 23505 unique_violation: another process created it first.
      const code = (error as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw error;
    }
  } finally {
    await client.end();
  }
}

/**
 * Creates the database if needed and applies pending migrations under a session advisory lock,
 * held on its own connection (hence a pool of two), so concurrent runs (several containers starting at once) apply each migration exactly once;
 * then creates the daily partitions of today and `partitionsAheadDays` days ahead under the same lock.
 */
export async function runMigrations(databaseUrl: string, partitionsAheadDays = DEFAULT_PARTITIONS_AHEAD_DAYS): Promise<MigrationReport> {
  const databaseCreated = await ensureDatabase(databaseUrl);
  const dataSource = createDataSource(databaseUrl, { poolSize: 2, applicationName: 'event-callbacks-migrate', queryTimeoutMs: 0 });
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      const partitionsCreated = [...(await ensureDailyPartitions(runner, partitionsAheadDays)), ...(await ensureAuditPartitions(runner))];
      return { databaseCreated, applied: applied.map((migration) => migration.name), partitionsCreated };
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
}
