import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { QueryFailedError } from 'typeorm';
import { type DeliveryProducer, type DeliveryQueues, DomainError, type Environment, validationFailed } from '@app/runtime';
import type { Sql } from '@app/persistence/testing';
import { describeTaskFailure, SteppedTaskRunner, TASK_FAILURE_TEXT } from './leased-task-runner';
import { RedeliveryRunner } from './redelivery-runner.service';

/* An error text that quotes what must never reach a task row: a target with its password, a message's value. */
const LEAKY = new Error('connect to amqp://shop:hunter2@broker.example.com failed for cellphone 13800000000');

interface Recorded {
  sql: string;
  parameters: unknown[];
}

/** A data source whose transactions find the task owned and whose plain queries are recorded (no database: the runner's own logic). */
function fakeDataSource(): { dataSource: DataSource; recorded: Recorded[] } {
  const recorded: Recorded[] = [];
  const dataSource = {
    query: (sql: string, parameters: unknown[] = []) => {
      recorded.push({ sql, parameters });
      return Promise.resolve([]);
    },
    transaction: (work: (manager: EntityManager) => Promise<unknown>) => work({ query: () => Promise.resolve([{ owned: 1 }]) } as unknown as EntityManager),
  } as unknown as DataSource;
  return { dataSource, recorded };
}

class FailingRunner extends SteppedTaskRunner<string> {
  constructor(dataSource: DataSource) {
    super(dataSource, 'erasure_tasks', 'erasure');
  }
  protected idOf(text: string): string {
    return text;
  }
  protected step(): Promise<boolean> {
    return Promise.reject(LEAKY);
  }
  workOn(id: string): Promise<void> {
    return this.work(id);
  }
}

function storedErrors(recorded: Recorded[]): unknown[] {
  return recorded.filter((call) => /SET (status = 'failed', )?error = \$3/.test(call.sql)).map((call) => call.parameters[2]);
}

beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['log', 'warn', 'error']));

describe('task failures as stored', () => {
  it('describes a non-database error with a fixed text, never its message', () => {
    expect(describeTaskFailure(LEAKY)).toBe(TASK_FAILURE_TEXT);
    expect(describeTaskFailure('a string thrown')).toBe(TASK_FAILURE_TEXT);
  });

  it('describes a database error by SQLSTATE and statement name, without the values it quotes', () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "accounts_email" Key (email)=(ann@example.com)'), { code: '23505' });
    const failure = new QueryFailedError('UPDATE accounts SET email = $1 WHERE id = $2', ['ann@example.com', 7], driverError);
    const text = describeTaskFailure(failure);
    expect(text).toBe('database error 23505 in UPDATE accounts');
    expect(text).not.toContain('ann@example.com');
  });

  it('describes a refused stored filter by its fields and the service\'s own problems', () => {
    const refused = validationFailed([{ path: 'since', problem: 'since is required with q (a range of at most 31 days)' }]);
    expect(describeTaskFailure(refused)).toBe("the task's filter is refused: since: since is required with q (a range of at most 31 days)");
    // Any other DomainError (whose message may quote an id) is described by the fixed text.
    expect(describeTaskFailure(new DomainError('not_found', 'event customer-13800000000 does not exist'))).toBe(TASK_FAILURE_TEXT);
  });

  it('a stepped task (erasure, account deletion) stores the fixed text when a step throws', async () => {
    const { dataSource, recorded } = fakeDataSource();
    await new FailingRunner(dataSource).workOn('5b0c6a5e-0000-4000-8000-000000000001');
    expect(storedErrors(recorded)).toEqual([TASK_FAILURE_TEXT]);
  });

  it('a bulk redelivery stores the fixed text when it fails', async () => {
    const dataSource = {
      recorded: [] as Recorded[],
      query(sql: string, parameters: unknown[] = []) {
        this.recorded.push({ sql, parameters });
        return Promise.resolve([]);
      },
      transaction: () => Promise.reject(LEAKY),
    };
    const runner = new RedeliveryRunner(dataSource as unknown as DataSource, {} as DeliveryProducer, {} as DeliveryQueues, {} as Sql, {} as Environment);
    runner.run('5b0c6a5e-0000-4000-8000-000000000002');
    await runner.beforeApplicationShutdown();
    expect(storedErrors(dataSource.recorded)).toEqual([TASK_FAILURE_TEXT]);
  });
});
