import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ClientBase, QueryResultRow } from 'pg';
import { DataSource, QueryFailedError, type QueryRunner } from 'typeorm';
import { GenericPlanPool } from '../generic-plan-pool';
import type { Statement } from './statement';

/** What a statement answers: its rows as node-postgres reads them (an UPDATE's RETURNING rows, not TypeORM's [rows, count]). */
async function runOn<R extends object>(client: ClientBase, statement: Statement<object, R>, values: unknown[], named: boolean): Promise<R[]> {
  const result = named
    ? await client.query<QueryResultRow>({ name: statement.name, text: statement.text, values })
    : await client.query<QueryResultRow>(statement.text, values);
  return result.rows as R[];
}

/**
 * PostgreSQL's refusal of a statement as TypeORM's error for a query, its query the statement's text and
 * no values: what the apps' error filter and handlers know, so a log names the statement (verb and first
 * table, docs/hostile-input.md) as it does for TypeORM's own queries. Other errors (a lost connection) pass.
 */
function asQueryFailed(statement: Statement<object, object>, error: unknown): unknown {
  if (error instanceof QueryFailedError || !(error instanceof Error) || !('severity' in error)) return error;
  return new QueryFailedError(statement.text, undefined, error);
}

/**
 * Runs the statements of this folder's modules as each one's plan mode says (statement.ts), on the
 * app's pool, on the kept-plan pool, or inside a caller's transaction (`within`: a QueryRunner that has
 * started one).
 */
@Injectable()
export class Sql {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keptPlans: GenericPlanPool,
  ) {}

  async rows<P extends object, R extends object>(statement: Statement<P, R>, params: P, within?: QueryRunner): Promise<R[]> {
    try {
      return await this.run(statement, params, within);
    } catch (error) {
      throw asQueryFailed(statement, error);
    }
  }

  private async run<P extends object, R extends object>(statement: Statement<P, R>, params: P, within?: QueryRunner): Promise<R[]> {
    const values = statement.values(params);
    if (within) return runOn((await within.connect()) as ClientBase, statement, values, statement.plan !== 'plain');
    if (statement.plan === 'generic') return this.keptPlans.query<R & QueryResultRow>(statement.name, statement.text, values);
    const runner = this.dataSource.createQueryRunner('master');
    try {
      return await runOn((await runner.connect()) as ClientBase, statement, values, statement.plan === 'prepared');
    } finally {
      await runner.release();
    }
  }

  /** The first row, or null when there is none. */
  async first<P extends object, R extends object>(statement: Statement<P, R>, params: P, within?: QueryRunner): Promise<R | null> {
    const [row] = await this.rows(statement, params, within);
    return row ?? null;
  }

  /** Runs `work` in one transaction on one connection (READ COMMITTED), committed when it resolves. */
  async transaction<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner('master');
    await runner.connect();
    await runner.startTransaction();
    try {
      const result = await work(runner);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
  }
}
