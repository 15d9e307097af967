import type { DataSource } from 'typeorm';
import { createDataSource, defineStatement, GenericPlanPool, Sql } from '@app/persistence/testing';

/**
 * The plan modes of the statements (libs/persistence/src/statements/statement.ts) on real PostgreSQL,
 * through `Sql` as the apps run them: a `prepared` statement is prepared once on the connection under its
 * name and reused with new values, planned as PostgreSQL chooses; a `generic` one runs on GenericPlanPool's
 * connections, which keep one generic plan for every call, also when the database URL carries `options`
 * of its own; a `plain` one is never prepared. One connection in the app's pool, so every call meets the
 * same session.
 */
let dataSource: DataSource;
let keptPlans: GenericPlanPool;
let sql: Sql;

beforeAll(async () => {
  dataSource = createDataSource(process.env.DATABASE_URL ?? '', { poolSize: 1, applicationName: 'prepared-query-test' });
  await dataSource.initialize();
  keptPlans = new GenericPlanPool(dataSource);
  sql = new Sql(dataSource, keptPlans);
});

afterAll(async () => {
  await keptPlans?.onApplicationShutdown();
  await dataSource?.destroy();
});

interface PlanCounts {
  mode: string;
  /** How often PostgreSQL planned this prepared statement generically and for its values, counting the call that reads them. */
  generic: number;
  custom: number;
  n: number;
}

/**
 * A statement that reads its own entry in pg_prepared_statements while it runs (the plan is chosen and
 * counted before execution), with the connection's plan_cache_mode. Left to choose, PostgreSQL plans a
 * statement with parameters for its values on its first five calls.
 */
function selfReporting(name: string, plan: 'prepared' | 'generic' | 'plain') {
  return defineStatement<{ n: number }, PlanCounts>(
    name,
    plan,
    (p) => `
    SELECT current_setting('plan_cache_mode') AS mode,
           COALESCE((SELECT generic_plans FROM pg_prepared_statements WHERE name = '${name}'), 0)::int AS generic,
           COALESCE((SELECT custom_plans FROM pg_prepared_statements WHERE name = '${name}'), 0)::int AS custom,
           ${p.n}::int AS n`,
  );
}

it('prepares a statement once under its name and answers each call with its own values', async () => {
  const double = defineStatement<{ n: number }, { doubled: number }>('prepared-query-test-double', 'prepared', (p) => `SELECT ${p.n}::int * 2 AS doubled`);
  expect(await sql.rows(double, { n: 3 })).toEqual([{ doubled: 6 }]);
  expect(await sql.first(double, { n: 21 })).toEqual({ doubled: 42 });

  // One entry, the statement's own text, executed twice: parsed once on the connection, not per call.
  const prepared = await dataSource.query<{ name: string; statement: string; executions: number }[]>(
    `SELECT name, statement, (generic_plans + custom_plans)::int AS executions FROM pg_prepared_statements WHERE name = 'prepared-query-test-double'`,
  );
  expect(prepared).toEqual([{ name: 'prepared-query-test-double', statement: double.text, executions: 2 }]);
});

it('plans a prepared statement on the app pool for its values, as PostgreSQL chooses', async () => {
  const statement = selfReporting('prepared-query-test-own-plans', 'prepared');
  expect(await sql.first(statement, { n: 1 })).toEqual({ mode: 'auto', generic: 0, custom: 1, n: 1 });
  expect(await sql.first(statement, { n: 2 })).toEqual({ mode: 'auto', generic: 0, custom: 2, n: 2 });
});

it('never prepares a plain statement', async () => {
  const statement = selfReporting('prepared-query-test-plain', 'plain');
  expect(await sql.first(statement, { n: 5 })).toEqual({ mode: 'auto', generic: 0, custom: 0, n: 5 });
  expect(await dataSource.query(`SELECT name FROM pg_prepared_statements WHERE name = 'prepared-query-test-plain'`)).toEqual([]);
});

it('passes a failed statement on as the driver reports it (SQLSTATE kept for the callers)', async () => {
  const failing = defineStatement<{ n: number }, { x: number }>('prepared-query-test-fail', 'prepared', (p) => `SELECT 1 / ${p.n}::int AS x`);
  await expect(sql.rows(failing, { n: 0 })).rejects.toMatchObject({ code: '22012' });
  // The connection is still usable, the statement too.
  expect(await sql.rows(failing, { n: 1 })).toEqual([{ x: 1 }]);
});

it('runs a generic statement under one kept generic plan from its first call, the app pool keeping its own planning', async () => {
  const statement = selfReporting('prepared-query-test-kept', 'generic');
  const first = await sql.first(statement, { n: 1 });
  expect(first).toMatchObject({ mode: 'force_generic_plan', custom: 0, n: 1 });
  expect(first?.generic).toBeGreaterThanOrEqual(1);
  for (let n = 2; n <= 7; n += 1) expect(await sql.first(statement, { n })).toMatchObject({ mode: 'force_generic_plan', custom: 0, n });
  // The setting stays on the kept-plan connections: the app's pool still plans for the values.
  expect(await dataSource.query(`SELECT current_setting('plan_cache_mode') AS mode`)).toEqual([{ mode: 'auto' }]);
});

it('keeps forcing generic plans when the database URL carries options of its own', async () => {
  const withOptions = new URL(process.env.DATABASE_URL ?? '');
  withOptions.searchParams.set('options', '-c search_path=public');
  const own = createDataSource(withOptions.toString(), { poolSize: 1, applicationName: 'prepared-query-test-options' });
  await own.initialize();
  const ownKeptPlans = new GenericPlanPool(own);
  try {
    const ownSql = new Sql(own, ownKeptPlans);
    const statement = defineStatement<{ n: number }, PlanCounts & { path: string }>(
      'prepared-query-test-kept-with-options',
      'generic',
      (p) => `
      SELECT current_setting('plan_cache_mode') AS mode, current_setting('search_path') AS path,
             COALESCE((SELECT generic_plans FROM pg_prepared_statements WHERE name = 'prepared-query-test-kept-with-options'), 0)::int AS generic,
             COALESCE((SELECT custom_plans FROM pg_prepared_statements WHERE name = 'prepared-query-test-kept-with-options'), 0)::int AS custom,
             ${p.n}::int AS n`,
    );
    const first = await ownSql.first(statement, { n: 1 });
    // Both the URL's own option and the forced generic plans hold.
    expect(first).toMatchObject({ mode: 'force_generic_plan', path: 'public', custom: 0, n: 1 });
    expect(first?.generic).toBeGreaterThanOrEqual(1);
  } finally {
    await ownKeptPlans.onApplicationShutdown();
    await own.destroy();
  }
});
