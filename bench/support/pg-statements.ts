import type { Client } from 'pg';

/** One normalised statement's running totals in pg_stat_statements. */
export interface StatementTotals {
  query: string;
  calls: number;
  /** total_exec_time, ms: the time PostgreSQL spent executing it (planning excluded). */
  execMs: number;
  walBytes: number;
}

/** What the statements of a phase cost per event. */
export interface StatementsPerEvent {
  /** Statements executed per event (every statement, not only those listed in `top`). */
  calls: number;
  /** Execution time per event, µs. */
  execUs: number;
  /** The costliest statements by execution time, per event. */
  top: Array<{ query: string; calls: number; execUs: number; walBytes: number }>;
}

/** How many statements a phase's note lists: BENCH_TOP_STATEMENTS when it is a positive whole number, else 6. */
const TOP = ((asked: number) => (Number.isInteger(asked) && asked > 0 ? asked : 6))(Number(process.env.BENCH_TOP_STATEMENTS));
/** A statement's text as the note shows it: one line, cut short. */
const QUERY_CHARS = 90;

/**
 * The bench database's statements from pg_stat_statements, or null when the server does not load it
 * (`shared_preload_libraries`; docs/benchmarks.md says how to turn it on). `db` is connected to
 * the server's `postgres` database, where the view is created when missing.
 */
export async function readStatements(db: Client, database: string): Promise<Map<string, StatementTotals> | null> {
  const loaded = await db.query<{ libraries: string }>(`SELECT current_setting('shared_preload_libraries') AS libraries`);
  if (!/\bpg_stat_statements\b/.test(loaded.rows[0]?.libraries ?? '')) return null;
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const rows = await db.query<{ id: string; query: string; calls: string; exec_ms: number; wal_bytes: string }>(
    `SELECT s.queryid::text || '/' || s.userid::text || '/' || s.toplevel::text AS id, s.query, s.calls, s.total_exec_time AS exec_ms, s.wal_bytes
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
    [database],
  );
  return new Map(rows.rows.map((row) => [row.id, { query: row.query, calls: Number(row.calls), execMs: Number(row.exec_ms), walBytes: Number(row.wal_bytes) }]));
}

const oneLine = (query: string): string => {
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length > QUERY_CHARS ? `${flat.slice(0, QUERY_CHARS - 1)}…` : flat;
};

/** The change between two readings, per event; null when either is missing. Exported for its unit test. */
export function statementsPerEvent(before: Map<string, StatementTotals> | null, after: Map<string, StatementTotals> | null, events: number): StatementsPerEvent | null {
  if (!before || !after) return null;
  const per = Math.max(1, events);
  const changes: StatementsPerEvent['top'] = [];
  for (const [id, total] of after) {
    const start = before.get(id);
    const calls = total.calls - (start?.calls ?? 0);
    if (calls <= 0) continue;
    changes.push({
      query: oneLine(total.query),
      calls: calls / per,
      execUs: ((total.execMs - (start?.execMs ?? 0)) * 1000) / per,
      walBytes: (total.walBytes - (start?.walBytes ?? 0)) / per,
    });
  }
  changes.sort((a, b) => b.execUs - a.execUs);
  return {
    calls: changes.reduce((sum, entry) => sum + entry.calls, 0),
    execUs: changes.reduce((sum, entry) => sum + entry.execUs, 0),
    top: changes.slice(0, TOP),
  };
}

/** `3.10 statements, 420 µs executing; top: 95 µs ×1.00 INSERT INTO events …; …`. */
export function statementsText(statements: StatementsPerEvent): string {
  const top = statements.top.map((entry) => `${Math.round(entry.execUs)} µs ×${entry.calls.toFixed(2)} ${entry.query}`);
  return `${statements.calls.toFixed(2)} statements, ${Math.round(statements.execUs)} µs executing per event (pg_stat_statements); costliest: ${top.join('; ')}`;
}
