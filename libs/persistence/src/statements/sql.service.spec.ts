import { DataSource, QueryFailedError } from 'typeorm';
import { loggableError } from '@app/runtime';
import type { GenericPlanPool } from '../generic-plan-pool';
import { Sql } from './sql.service';
import { defineStatement } from './statement';

const SET_TARGET = defineStatement<{ id: number; target: string }>('set-target', 'plain', (p) => `UPDATE destinations SET target = ${p.target} WHERE account_id = ${p.id}`);

/** A DataSource whose one connection answers every query with `failure` (what node-postgres would raise). */
function failingDataSource(failure: Error): DataSource {
  const client = { query: () => Promise.reject(failure) };
  const runner = { connect: () => Promise.resolve(client), release: () => Promise.resolve() };
  return Object.assign(Object.create(DataSource.prototype) as DataSource, { createQueryRunner: () => runner });
}

const noKeptPlans = {} as GenericPlanPool;

describe('Sql errors', () => {
  it('turns PostgreSQL refusing a statement into a QueryFailedError naming the statement, without its values', async () => {
    const refusal = Object.assign(new Error('refused url http://x/?token=secret-123'), { code: 'P0001', severity: 'ERROR' });
    const sql = new Sql(failingDataSource(refusal), noKeptPlans);
    const error: unknown = await sql.rows(SET_TARGET, { id: 1, target: 'http://x/?token=secret-123' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QueryFailedError);
    expect((error as QueryFailedError).driverError).toBe(refusal);
    expect((error as { code?: string }).code).toBe('P0001');
    expect((error as QueryFailedError).parameters).toBeUndefined();
    expect(loggableError(error)).toEqual({ database_error: { sqlstate: 'P0001', statement: 'UPDATE destinations' } });
  });

  it('passes an error that is not PostgreSQL’s refusal unchanged (a lost connection)', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const sql = new Sql(failingDataSource(lost), noKeptPlans);
    await expect(sql.rows(SET_TARGET, { id: 1, target: 'x' })).rejects.toBe(lost);
  });
});
