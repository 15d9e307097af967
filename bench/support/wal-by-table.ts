import { Client } from 'pg';

/** WAL a phase wrote on one table or index (its partitions folded in), per event. */
export interface TableWal {
  /** The table's or the index's name, a partitioned one's root (`events_pkey`, not `events_p20261130_pkey`). */
  table: string;
  /** Record bytes, full-page images included. */
  bytes: number;
  /** Of which full-page images. */
  fpiBytes: number;
  records: number;
}

/**
 * Asked with BENCH_WAL_BY_TABLE=1: where a phase's WAL went, read back from the WAL itself
 * (pg_walinspect, PostgreSQL 15+), so the figure can be split by table without a server restart.
 * Off by default: reading a phase's records takes seconds of the server's CPU after the phase.
 */
export const walByTableAsked = (): boolean => process.env.BENCH_WAL_BY_TABLE === '1';

/**
 * Each record counts once, on the relation of its first block, named by its partitioned root
 * (`deliveries`, not `deliveries_p20261130`); records without a block (commits) by their resource
 * manager, and relations of other databases as `other databases`. Records are summed per relation
 * before any name is looked up, so a phase of a million records costs one lookup per relation. A range
 * ends at most at the flushed position (pg_walinspect reads nothing beyond it): records written and not
 * yet flushed, which no commit has waited for, are left out, and a range that wrote nothing is skipped.
 */
export async function walByTable(databaseUrl: string, ranges: ReadonlyArray<readonly [from: string, to: string]>, events: number): Promise<TableWal[]> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const rows = await db.query<{ table: string; bytes: string; fpi: string; records: string }>(
      `WITH r AS (
         SELECT CASE WHEN w.block_ref IS NULL OR w.block_ref = '' THEN lower(w.resource_manager) || ' (no relation)' END AS unrelated,
                regexp_match(w.block_ref, 'rel (\\d+)/(\\d+)/(\\d+)') AS rel, w.record_length, w.fpi_length
           FROM (SELECT from_lsn, least(to_lsn, pg_current_wal_flush_lsn()) AS to_lsn
                   FROM unnest($1::pg_lsn[], $2::pg_lsn[]) AS asked(from_lsn, to_lsn)) phase,
                LATERAL pg_get_wal_records_info(phase.from_lsn, phase.to_lsn) w
          WHERE phase.from_lsn < phase.to_lsn),
       grouped AS (
         SELECT unrelated, rel, sum(record_length) AS bytes, sum(fpi_length) AS fpi, count(*) AS records FROM r GROUP BY unrelated, rel),
       named AS (
         SELECT bytes, fpi, records,
                CASE WHEN rel IS NULL THEN coalesce(unrelated, 'unparsed')
                     WHEN rel[2]::oid <> (SELECT oid FROM pg_database WHERE datname = current_database()) THEN 'other databases'
                     ELSE coalesce((SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text
                                      FROM pg_class c
                                     WHERE c.oid = pg_filenode_relation(CASE WHEN rel[1] = '1663' THEN 0 ELSE rel[1]::oid END, rel[3]::oid)),
                                   'unnamed (dropped or system)') END AS "table"
           FROM grouped)
       SELECT "table", sum(bytes)::text AS bytes, sum(fpi)::text AS fpi, sum(records)::text AS records
         FROM named GROUP BY "table" ORDER BY sum(bytes) DESC`,
      [ranges.map(([from]) => from), ranges.map(([, to]) => to)],
    );
    const per = Math.max(1, events);
    return rows.rows.map((row) => ({ table: row.table, bytes: Number(row.bytes) / per, fpiBytes: Number(row.fpi) / per, records: Number(row.records) / per }));
  } finally {
    await db.end();
  }
}

/** `events 812 B (FPI 120, 3.1 records); deliveries 640 B …`. */
export function walByTableText(tables: readonly TableWal[]): string {
  const shown = tables.filter((entry) => entry.bytes >= 1);
  return shown.map((entry) => `${entry.table} ${Math.round(entry.bytes)} B (FPI ${Math.round(entry.fpiBytes)}, ${entry.records.toFixed(2)} records)`).join('; ');
}
