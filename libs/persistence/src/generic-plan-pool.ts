import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral, type QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { preparedQuery } from './prepared-query';

/** Connections a process opens for kept plans: the worker's loads and erasure checks (two statements each in flight) and its records (one each). */
export const GENERIC_PLAN_POOL_SIZE = 4;

/** The start-up option that makes PostgreSQL keep one generic plan per prepared statement on a connection. */
export const FORCE_GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

/**
 * `databaseUrl` with FORCE_GENERIC_PLANS added to its own `options` parameter: node-postgres lets a
 * URL's parameters override the client's settings, so a URL carrying `options` (a search_path, say)
 * would otherwise drop the setting and bring per-call planning back without a word.
 */
export function withForcedGenericPlans(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const own = url.searchParams.get('options');
  url.searchParams.set('options', own ? `${own} ${FORCE_GENERIC_PLANS}` : FORCE_GENERIC_PLANS);
  return url.toString();
}

interface PlanRow {
  'QUERY PLAN': string;
}

/** A value's text as PostgreSQL reads it back for its column type (objects as JSON). */
function valueText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return value.toString();
  return JSON.stringify(value);
}

/** A parameter's value as an untyped SQL literal (arrays in PostgreSQL's array text). */
function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (!Array.isArray(value)) return escapeLiteral(valueText(value));
  const elements = value.map((element: unknown) =>
    element === null || element === undefined ? 'NULL' : `"${valueText(element).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`,
  );
  return escapeLiteral(`{${elements.join(',')}}`);
}

/**
 * The generic plan of `text` as a connection that forces generic plans keeps it, one line per plan
 * node, with `values` as its parameters: EXPLAIN of the prepared statement's EXECUTE (EXPLAIN of the
 * text itself would plan it for the values). `run` must run every statement on one connection, which
 * it leaves forcing generic plans. `analyze` runs the statement too, adding what each node did (its loops
 * and the rows its filters threw away); it writes what the statement writes.
 */
export async function keptPlanLines(run: (sql: string) => Promise<PlanRow[]>, text: string, values: unknown[], analyze = false): Promise<string[]> {
  const name = `kept_plan_probe_${process.pid}`;
  await run(`SET plan_cache_mode = force_generic_plan`);
  await run(`PREPARE ${name} AS ${text}`);
  try {
    // EXPLAIN takes no bound parameters: the values travel as literals, typed by the statement's casts.
    return (await run(`EXPLAIN (${analyze ? 'ANALYZE, TIMING OFF, ' : ''}COSTS OFF) EXECUTE ${name}(${values.map(sqlLiteral).join(', ')})`)).map((row) => row['QUERY PLAN'].trim());
  } finally {
    await run(`DEALLOCATE ${name}`);
  }
}

/**
 * Connections on which PostgreSQL plans each prepared statement once and keeps that plan for every
 * call (`plan_cache_mode = force_generic_plan`), for statements written to be served by one plan. Left
 * to choose, PostgreSQL plans a statement over partitions for its values on every call whenever its
 * statistics make a custom plan look cheaper: the worker's outcome record spent 2.1 ms planning against
 * 1.1 ms running, per statement (measured in the commit that chose it). A generic plan prunes partitions when
 * the executor starts, from scalar parameters (`seq BETWEEN $a AND $b`), not from an array's elements.
 *
 * A pool of its own because the setting holds for a whole connection: on the app's pool it would fix
 * the plan of every other statement too, some of which want a plan for their values. Opened on first
 * use, so a process that runs no such statement opens no connection.
 */
@Injectable()
export class GenericPlanPool implements OnApplicationShutdown {
  private opened: Promise<DataSource> | null = null;

  constructor(@InjectDataSource() private readonly appDataSource: DataSource) {}

  /** Runs `text` as the prepared statement `name` under its one generic plan (see preparedQuery). */
  async query<T extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return preparedQuery<T>(await this.dataSource(), name, text, values);
  }

  /** The plan this pool keeps for `text`, `values` as the parameters (see keptPlanLines: `analyze` runs it too). */
  async keptPlan(text: string, values: unknown[], analyze = false): Promise<string[]> {
    const runner = (await this.dataSource()).createQueryRunner('master');
    try {
      return await keptPlanLines((sql) => runner.query(sql) as Promise<PlanRow[]>, text, values, analyze);
    } finally {
      await runner.release();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    const dataSource = await opened?.catch(() => null);
    if (dataSource?.isInitialized) await dataSource.destroy();
  }

  private dataSource(): Promise<DataSource> {
    this.opened ??= this.open().catch((error: unknown) => {
      // The next statement tries again: PostgreSQL may have been away for a moment.
      this.opened = null;
      throw error;
    });
    return this.opened;
  }

  private open(): Promise<DataSource> {
    const options = this.appDataSource.options as PostgresConnectionOptions;
    return new DataSource({
      ...options,
      ...(options.url ? { url: withForcedGenericPlans(options.url) } : {}),
      entities: [],
      migrations: [],
      extra: { ...(options.extra as Record<string, unknown>), max: GENERIC_PLAN_POOL_SIZE, options: FORCE_GENERIC_PLANS },
    }).initialize();
  }
}
