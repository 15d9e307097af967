import { readFileSync } from 'node:fs';
import type { Client } from 'pg';

/** Linux reports CPU times in clock ticks of 1/100 s (USER_HZ) on every common architecture. */
export const TICK_MS = 10;

/** User + system CPU of a process from the fields of its /proc/<pid>/stat line, in ms; exported for its unit test. */
export function statCpuMs(statLine: string): number | null {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = statLine.slice(statLine.lastIndexOf(') ') + 2).split(' ');
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  return Number.isFinite(user) && Number.isFinite(system) ? (user + system) * TICK_MS : null;
}

/** CPU time a process used so far (user + system), in ms; null when it is gone or not readable. */
export function procCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Run time from a /proc/<pid>/schedstat line (its first field, nanoseconds), in ms; exported for its unit test. */
export function schedstatRunMs(line: string): number | null {
  const nanoseconds = Number(line.split(' ')[0]);
  return line.trim() !== '' && Number.isFinite(nanoseconds) ? nanoseconds / 1e6 : null;
}

/**
 * Time a process has run on a CPU so far, in ms, from the scheduler's own nanosecond count; null when it
 * is gone. For the path-cost probes' short statements, where procCpuMs's 10 ms ticks (charged to
 * whatever runs when the tick falls) swung the same statement ±15 % run to run.
 */
export function procRunMs(pid: number): number | null {
  try {
    return schedstatRunMs(readFileSync(`/proc/${pid}/schedstat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * CPU ms of every PostgreSQL process serving `database` (client backends, autovacuum workers), by pid,
 * read through `db` (a connection to another database, or the reader's own backend is excluded).
 */
export async function backendCpuMs(db: Pick<Client, 'query'>, database: string): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = procCpuMs(pid);
    if (ms !== null) cpu.set(pid, ms);
  }
  return cpu;
}

/**
 * CPU ms the backends used between two readings: a backend seen only in `after` started within the
 * interval and counts from zero; one that ended before `after` is lost (the pools keep theirs open).
 */
export function backendDeltaMs(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += Math.max(0, ms - (before.get(pid) ?? 0));
  return total;
}
