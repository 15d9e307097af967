import type { QueryRunner } from 'typeorm';

/** A partition as the catalog lists it: its name and its bound as PostgreSQL prints it (`FOR VALUES FROM (…) TO (…)`, `DEFAULT`). */
export interface BoundRow {
  name: string;
  bound: string;
}

/** The partitions of `table`, with timestamp bounds printed in UTC (the setting lasts until the caller's transaction ends). */
export async function readPartitionBounds(runner: QueryRunner, table: string): Promise<BoundRow[]> {
  await runner.query(`SELECT set_config('TimeZone', 'UTC', true)`);
  return (await runner.query(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass`,
    [table],
  )) as BoundRow[];
}

/** A timestamp bound as readPartitionBounds prints it ('2026-11-23 00:00:00+00'), in epoch ms (NaN when it is none). */
export function boundTimestampMs(text: string): number {
  return Date.parse(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}
