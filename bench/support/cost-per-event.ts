import { Redis } from 'ioredis';
import { Client } from 'pg';
import { readStatements, type StatementTotals, type StatementsPerEvent, statementsPerEvent, statementsText } from './pg-statements';
import { backendCpuMs, backendDeltaMs } from './proc-cpu';
import type { SupervisedProcess } from './process-supervisor';
import { type TableWal, walByTable, walByTableAsked, walByTableText } from './wal-by-table';

/** Every counter the cost of a phase is read from, at one moment. */
export interface CostReading {
  /** CPU ms of each process of the pipeline measured (ingest, worker, or the baseline's), in order. */
  processMs: Array<{ name: string; ms: number }>;
  /** CPU ms of each PostgreSQL process serving the bench database, by pid. */
  backendMs: Map<number, number>;
  /** The Redis server's CPU (INFO cpu: user + system), in ms. */
  redisMs: number;
  /** Transactions committed or rolled back in the bench database (pg_stat_database). */
  transactions: number;
  /** Rows inserted, updated or deleted in the bench database (pg_stat_database). */
  rowsWritten: number;
  /** The cluster's WAL position (pg_current_wal_lsn), in bytes. */
  walBytes: number;
  /** The same position as PostgreSQL writes it, for reading the phase's records back. */
  walLsn?: string;
  /** The bench database's statements (pg_stat_statements), null when the server does not load it. */
  statements?: Map<string, StatementTotals> | null;
}

/** What one event cost over a phase, per process and in PostgreSQL. */
export interface CostPerEvent {
  events: number;
  /** CPU µs per event of each pipeline process, those of one kind (ingest#2, ingest#5 → ingest) summed. */
  processes: Array<{ name: string; us: number }>;
  postgresUs: number;
  redisUs: number;
  /** Every process above together. */
  totalUs: number;
  transactions: number;
  rowsWritten: number;
  walBytes: number;
  /** PostgreSQL's statements per event, when pg_stat_statements is loaded. */
  statements?: StatementsPerEvent | null;
  /** The WAL per event by table, when BENCH_WAL_BY_TABLE=1. */
  walByTable?: TableWal[];
}

/** `ingest#2` → `ingest`, `delivery-worker#3` → `worker`, `baseline#1` → `baseline`. */
export function processKind(name: string): string {
  const kind = name.split('#')[0] ?? name;
  return kind === 'delivery-worker' ? 'worker' : kind;
}

/** The arithmetic: each counter's change over the phase divided by its events; exported for its unit test. */
export function costPerEvent(before: CostReading, after: CostReading, events: number): CostPerEvent {
  const per = Math.max(1, events);
  const kinds = new Map<string, number>();
  for (const { name, ms } of after.processMs) {
    const start = before.processMs.find((entry) => entry.name === name)?.ms ?? 0;
    kinds.set(processKind(name), (kinds.get(processKind(name)) ?? 0) + Math.max(0, ms - start));
  }
  const processes = [...kinds].map(([name, ms]) => ({ name, us: (ms * 1000) / per }));
  const postgresUs = (backendDeltaMs(before.backendMs, after.backendMs) * 1000) / per;
  const redisUs = (Math.max(0, after.redisMs - before.redisMs) * 1000) / per;
  return {
    events,
    processes,
    postgresUs,
    redisUs,
    totalUs: processes.reduce((sum, entry) => sum + entry.us, 0) + postgresUs + redisUs,
    transactions: (after.transactions - before.transactions) / per,
    rowsWritten: (after.rowsWritten - before.rowsWritten) / per,
    walBytes: (after.walBytes - before.walBytes) / per,
    statements: statementsPerEvent(before.statements ?? null, after.statements ?? null, events),
  };
}

/** used_cpu_user + used_cpu_sys of `INFO cpu`, in ms; exported for its unit test. */
export function redisCpuMs(info: string): number {
  const seconds = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
}

/** Where the counters are: the bench database (read from the server's `postgres` database) and Redis. */
export interface CostSources {
  databaseUrl: string;
  redisUrl: string;
}

/**
 * A backend sends its transaction and row counts to pg_stat_database when it goes idle, but not twice
 * within a second: one that sent them less than a second before waits PGSTAT_IDLE_INTERVAL (10 s,
 * PostgreSQL 15) to send the rest. The counts are read this long after a phase's end, so its last
 * statements count in it, and this long before its start, so earlier ones (warm-up, the previous phase)
 * do not.
 */
export const STATS_FLUSH_MS = 10_500;

type Counters = Omit<CostReading, 'transactions' | 'rowsWritten'>;

/** The counters that run with the clock: the processes' CPU, the bench database's backends', Redis's, the WAL position, the statements. */
async function readCounters(db: Client, redis: Redis, database: string, processes: readonly SupervisedProcess[]): Promise<Counters> {
  const processMs = processes.map((entry) => ({ name: entry.name, ms: entry.cpuMs() ?? 0 }));
  const [backendMs, info, wal] = await Promise.all([
    backendCpuMs(db, database),
    redis.info('cpu'),
    db.query<{ wal: string; lsn: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal, pg_current_wal_lsn()::text AS lsn`),
  ]);
  const statements = await readStatements(db, database);
  return { processMs, backendMs, redisMs: redisCpuMs(info), walBytes: Number(wal.rows[0]?.wal ?? 0), walLsn: wal.rows[0]?.lsn, statements };
}

/**
 * One reading. The transaction and row counts are always read STATS_FLUSH_MS after the activity they
 * must include; the CPU counters are read with no wait between them and the phase, or the idle seconds
 * of the wait would count as the phase's work: at the phase's start after the wait (just before the
 * load), at its end before it (as the last outcome is recorded).
 */
async function read(sources: CostSources, processes: readonly SupervisedProcess[], at: 'start' | 'end'): Promise<CostReading> {
  const server = new URL(sources.databaseUrl);
  const database = decodeURIComponent(server.pathname.slice(1));
  server.pathname = '/postgres';
  const db = new Client({ connectionString: server.toString() });
  const redis = new Redis(sources.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  const flushed = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
  try {
    await Promise.all([db.connect(), redis.connect()]);
    if (at === 'start') await flushed();
    const counters = at === 'end' ? await readCounters(db, redis, database, processes) : null;
    if (at === 'end') await flushed();
    const stats = await db.query<{ transactions: string; rows: string }>(
      `SELECT xact_commit + xact_rollback AS transactions, tup_inserted + tup_updated + tup_deleted AS rows FROM pg_stat_database WHERE datname = $1`,
      [database],
    );
    const row = stats.rows[0];
    return {
      ...(counters ?? (await readCounters(db, redis, database, processes))),
      transactions: Number(row?.transactions ?? 0),
      rowsWritten: Number(row?.rows ?? 0),
    };
  } finally {
    redis.disconnect();
    await db.end();
  }
}

/**
 * Starts counting the cost of a phase; `stop(events)` answers it per event. PostgreSQL and Redis
 * figures are the bench database's and the Redis server's: see docs/benchmarks.md for what
 * they include.
 */
export async function startCost(sources: CostSources, processes: readonly SupervisedProcess[]): Promise<{ stop(events: number): Promise<CostPerEvent> }> {
  const before = await read(sources, processes, 'start');
  return {
    stop: async (events) => {
      const after = await read(sources, processes, 'end');
      const cost = costPerEvent(before, after, events);
      if (!walByTableAsked() || !before.walLsn || !after.walLsn) return cost;
      return { ...cost, walByTable: await walByTable(sources.databaseUrl, [[before.walLsn, after.walLsn]], events) };
    },
  };
}

const us = (value: number): string => Math.round(value).toLocaleString('en-US');

/** One line: `ingest 300 + worker 700 + PostgreSQL 400 + Redis 90 = 1,490 µs; 1.02 transactions, …`. */
export function costText(cost: CostPerEvent): string {
  const parts = [...cost.processes.map((entry) => `${entry.name} ${us(entry.us)}`), `PostgreSQL ${us(cost.postgresUs)}`, `Redis ${us(cost.redisUs)}`];
  const line = `${parts.join(' + ')} = ${us(cost.totalUs)} µs; ${cost.transactions.toFixed(2)} transactions, ${cost.rowsWritten.toFixed(2)} rows written, ${us(cost.walBytes)} WAL bytes`;
  const withStatements = cost.statements ? `${line}; ${statementsText(cost.statements)}` : line;
  return cost.walByTable ? `${withStatements}; WAL by table: ${walByTableText(cost.walByTable)}` : withStatements;
}
