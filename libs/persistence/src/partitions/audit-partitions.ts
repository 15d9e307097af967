import type { QueryRunner } from 'typeorm';
import { boundTimestampMs, readPartitionBounds } from './partition-bounds';

/**
 * The audit log (CONTRACT §15) is partitioned by month of `at`: an append-only table can only shrink by
 * whole partitions, and a month is small enough to keep the retention close to AUDIT_RETENTION_DAYS
 * (an entry is kept that long, and at most a month longer) and large enough to keep the catalog short.
 */
export const AUDIT_TABLE = 'audit_log';
export const AUDIT_DEFAULT_PARTITION = 'audit_log_default';
/** Months created ahead of the current one: an insert never waits on DDL, nor lands in the default. */
export const AUDIT_MONTHS_AHEAD = 2;

export function monthStart(ms: number, plusMonths = 0): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + plusMonths, 1);
}

/** `audit_log_p202612`: the month it holds. */
export function auditPartitionName(monthStartMs: number): string {
  return `${AUDIT_TABLE}_p${new Date(monthStartMs).toISOString().slice(0, 7).replace('-', '')}`;
}

/** The statement creating a month's partition (the migration and the partition job share it). */
export function createAuditMonthSql(monthStartMs: number): string {
  const from = new Date(monthStartMs).toISOString();
  const to = new Date(monthStart(monthStartMs, 1)).toISOString();
  return `CREATE TABLE IF NOT EXISTS ${auditPartitionName(monthStartMs)} PARTITION OF ${AUDIT_TABLE} FOR VALUES FROM ('${from}') TO ('${to}')`;
}

interface AuditPartition {
  name: string;
  to: number | null;
}

async function auditPartitions(runner: QueryRunner): Promise<AuditPartition[]> {
  const rows = await readPartitionBounds(runner, AUDIT_TABLE);
  return rows.map((row) => {
    const match = /TO \('([^']+)'\)/.exec(row.bound);
    return { name: row.name, to: match ? boundTimestampMs(match[1]) : null };
  });
}

/**
 * Creates the current month's partition and AUDIT_MONTHS_AHEAD more. Rows the default partition caught
 * (only when this job fell behind) cannot be moved with DELETE, which the append-only trigger refuses:
 * the default is detached, the month created, its rows inserted again through the parent and the old
 * default dropped, all in one transaction.
 */
export async function ensureAuditPartitions(runner: QueryRunner, fromMs = Date.now()): Promise<string[]> {
  const created: string[] = [];
  for (let month = 0; month <= AUDIT_MONTHS_AHEAD; month += 1) {
    const start = monthStart(fromMs, month);
    const name = auditPartitionName(start);
    await runner.startTransaction();
    try {
      await runner.query(`SET LOCAL lock_timeout = '5s'`);
      const existing = await auditPartitions(runner);
      if (existing.some((partition) => partition.name === name)) {
        await runner.commitTransaction();
        continue;
      }
      const [{ caught }] = (await runner.query(`SELECT count(*)::int AS caught FROM ${AUDIT_DEFAULT_PARTITION} WHERE at >= $1 AND at < $2`, [
        new Date(start),
        new Date(monthStart(start, 1)),
      ])) as { caught: number }[];
      if (caught > 0) {
        const stale = `${AUDIT_DEFAULT_PARTITION}_moving`;
        await runner.query(`ALTER TABLE ${AUDIT_TABLE} DETACH PARTITION ${AUDIT_DEFAULT_PARTITION}`);
        await runner.query(`ALTER TABLE ${AUDIT_DEFAULT_PARTITION} RENAME TO ${stale}`);
        await runner.query(`CREATE TABLE ${AUDIT_DEFAULT_PARTITION} PARTITION OF ${AUDIT_TABLE} DEFAULT`);
        await runner.query(createAuditMonthSql(start));
        await runner.query(`INSERT INTO ${AUDIT_TABLE} OVERRIDING SYSTEM VALUE SELECT * FROM ${stale}`);
        await runner.query(`DROP TABLE ${stale}`);
      } else {
        await runner.query(createAuditMonthSql(start));
      }
      await runner.commitTransaction();
      created.push(name);
    } catch (error) {
      await runner.rollbackTransaction();
      throw error;
    }
  }
  return created;
}

/** Drops the month partitions that end at or before `cutoffMs` (now − AUDIT_RETENTION_DAYS): the only way entries ever leave. */
export async function dropExpiredAuditPartitions(runner: QueryRunner, cutoffMs: number): Promise<string[]> {
  const expired = (await auditPartitions(runner)).filter((partition) => partition.to !== null && partition.to <= cutoffMs);
  for (const partition of expired) await runner.query(`DROP TABLE ${partition.name}`);
  return expired.map((partition) => partition.name);
}
