import { QueryFailedError } from 'typeorm';
import { loggableError, loggableErrorText, statementName } from './database-errors';

/** A node-postgres error as the driver raises it: the server's message quotes the value. */
function driverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR', detail: 'Key (key)=(secret-key-123) already exists.' });
}

describe('loggableError', () => {
  it('keeps the SQLSTATE and the statement name of a failed query, and none of its values', () => {
    const error = new QueryFailedError(
      'INSERT INTO "bot_webhooks"("account_id", "name", "key") VALUES ($1, $2, $3)',
      [1, 'n', 'secret-key-123\u0000'],
      driverError('22021', 'invalid byte sequence for encoding "UTF8": 0x00 near "secret-key-123"'),
    );
    const logged = loggableError(error);
    expect(logged).toEqual({ database_error: { sqlstate: '22021', statement: 'INSERT bot_webhooks' } });
    expect(JSON.stringify(logged)).not.toContain('secret-key-123');
  });

  it('keeps only the SQLSTATE of a driver error outside TypeORM', () => {
    expect(loggableError(driverError('23505', 'duplicate key value violates unique constraint'))).toEqual({ database_error: { sqlstate: '23505' } });
  });

  it('passes other errors through for the logger to serialize', () => {
    const error = new TypeError('x is not a function');
    expect(loggableError(error)).toEqual({ err: error });
  });
});

describe('loggableErrorText', () => {
  it('names the SQLSTATE and the statement of a failed query, none of its values', () => {
    const error = new QueryFailedError('UPDATE events SET message = $1', ['secret-value'], driverError('22P02', 'invalid input syntax for type json: "secret-value"'));
    expect(loggableErrorText(error)).toBe('database error 22P02 in UPDATE events');
  });

  it('is the message of any other error', () => {
    expect(loggableErrorText(new Error('connection refused'))).toBe('connection refused');
  });
});

describe('statementName', () => {
  it.each([
    ['SELECT seq FROM events WHERE account_id = $1', 'SELECT events'],
    ['  update callback_settings SET push_url = $2', 'UPDATE callback_settings'],
    ['WITH x AS (SELECT 1) DELETE FROM "nonces" WHERE true', 'WITH nonces'],
    ['SELECT 1', 'SELECT'],
  ])('%s → %s', (sql, name) => {
    expect(statementName(sql)).toBe(name);
  });
});
