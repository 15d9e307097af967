import type { DataSource } from 'typeorm';
import { createDataSource, preparedQuery } from '@app/persistence';

/**
 * preparedQuery on real PostgreSQL: the statement is prepared once on the connection under its name and
 * reused with new values (the worker's ordered load and subject questions rely on it to skip planning).
 * One connection in the pool, so every call meets the same session.
 */
let dataSource: DataSource;

beforeAll(async () => {
  dataSource = createDataSource(process.env.DATABASE_URL ?? '', { poolSize: 1, applicationName: 'prepared-query-test' });
  await dataSource.initialize();
});

afterAll(async () => {
  await dataSource.destroy();
});

it('prepares the statement once under its name and answers each call with its own values', async () => {
  const sql = 'SELECT $1::int * 2 AS doubled';
  const first = await preparedQuery<{ doubled: number }>(dataSource, 'prepared-query-test-double', sql, [3]);
  const second = await preparedQuery<{ doubled: number }>(dataSource, 'prepared-query-test-double', sql, [21]);
  expect(first).toEqual([{ doubled: 6 }]);
  expect(second).toEqual([{ doubled: 42 }]);

  const prepared = await dataSource.query<{ name: string; statement: string }[]>(
    `SELECT name, statement FROM pg_prepared_statements WHERE name = 'prepared-query-test-double'`,
  );
  expect(prepared).toEqual([{ name: 'prepared-query-test-double', statement: sql }]);
});

it('passes a failed statement on as the driver reports it (SQLSTATE kept for the callers)', async () => {
  await expect(preparedQuery(dataSource, 'prepared-query-test-fail', 'SELECT 1 / $1::int AS x', [0])).rejects.toMatchObject({ code: '22012' });
});
