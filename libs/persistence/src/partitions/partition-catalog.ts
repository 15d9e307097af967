import type { QueryRunner } from 'typeorm';
import { PARTITIONED_TABLES, type PartitionedTable } from './partition-layout';

/** One partition of a partitioned table; bounds as bigint (seq, or epoch milliseconds for time keys), null for MINVALUE/MAXVALUE. */
export interface PartitionInfo {
  name: string;
  isDefault: boolean;
  from: bigint | null;
  to: bigint | null;
}

interface BoundRow {
  name: string;
  bound: string;
}

function parseBound(table: PartitionedTable, text: string): bigint | null {
  const value = text.trim().replace(/^'(.*)'$/, '$1');
  if (value === 'MINVALUE' || value === 'MAXVALUE') return null;
  if (PARTITIONED_TABLES[table].kind === 'seq') return BigInt(value);
  // Printed in the session's time zone, which listPartitions sets to UTC: '2026-11-23 00:00:00+00'.
  const ms = Date.parse(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  if (Number.isNaN(ms)) throw new Error(`cannot read the partition bound ${text} of ${table}`);
  return BigInt(ms);
}

/** The partitions of `table` with their bounds, read from the catalog (runs inside the caller's transaction). */
export async function listPartitions(runner: QueryRunner, table: PartitionedTable): Promise<PartitionInfo[]> {
  await runner.query(`SELECT set_config('TimeZone', 'UTC', true)`);
  const rows = (await runner.query(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass`,
    [table],
  )) as BoundRow[];
  return rows.map((row) => {
    if (row.bound === 'DEFAULT') return { name: row.name, isDefault: true, from: null, to: null };
    const match = /^FOR VALUES FROM \((.+)\) TO \((.+)\)$/.exec(row.bound);
    if (!match) throw new Error(`unexpected partition bound of ${row.name}: ${row.bound}`);
    return { name: row.name, isDefault: false, from: parseBound(table, match[1]), to: parseBound(table, match[2]) };
  });
}

export function overlaps(partition: PartitionInfo, from: bigint, to: bigint): boolean {
  if (partition.isDefault) return false;
  return (partition.from === null || partition.from < to) && (partition.to === null || from < partition.to);
}

/** Column names of a table in their order, quoted, for copies that must not depend on `SELECT *`. */
export async function columnList(runner: QueryRunner, table: string): Promise<string> {
  const [row] = (await runner.query(
    `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) AS columns
       FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [table],
  )) as { columns: string }[];
  return row.columns;
}
