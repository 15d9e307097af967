import type { QueryRunner } from 'typeorm';
import { boundTimestampMs, readPartitionBounds } from './partition-bounds';
import { PARTITIONED_TABLES, type PartitionedTable } from './partition-layout';

/** One partition of a partitioned table; bounds as bigint (seq, or epoch milliseconds for time keys), null for MINVALUE/MAXVALUE. */
export interface PartitionInfo {
  name: string;
  isDefault: boolean;
  from: bigint | null;
  to: bigint | null;
}

function parseBound(table: PartitionedTable, text: string): bigint | null {
  const value = text.trim().replace(/^'(.*)'$/, '$1');
  if (value === 'MINVALUE' || value === 'MAXVALUE') return null;
  if (PARTITIONED_TABLES[table].kind === 'seq') return BigInt(value);
  const ms = boundTimestampMs(value);
  if (Number.isNaN(ms)) throw new Error(`cannot read the partition bound ${text} of ${table}`);
  return BigInt(ms);
}

/** The partitions of `table` with their bounds, read from the catalog (runs inside the caller's transaction). */
export async function listPartitions(runner: QueryRunner, table: PartitionedTable): Promise<PartitionInfo[]> {
  const rows = await readPartitionBounds(runner, table);
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
