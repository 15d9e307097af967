import { type StatementTotals, statementsPerEvent, statementsText } from './pg-statements';

const reading = (entries: Array<[string, StatementTotals]>): Map<string, StatementTotals> => new Map(entries);

describe('statementsPerEvent', () => {
  it('is null when pg_stat_statements was not loaded at either end', () => {
    expect(statementsPerEvent(null, reading([]), 10)).toBeNull();
    expect(statementsPerEvent(reading([]), null, 10)).toBeNull();
  });

  it('divides each statement\'s change by the events, costliest first, statements new in the phase included', () => {
    const before = reading([
      ['a', { query: 'INSERT INTO events …', calls: 100, execMs: 50, walBytes: 1_000 }],
      ['b', { query: 'UPDATE   events\n SET status = $1', calls: 10, execMs: 5, walBytes: 0 }],
      ['idle', { query: 'SELECT 1', calls: 7, execMs: 1, walBytes: 0 }],
    ]);
    const after = reading([
      ['a', { query: 'INSERT INTO events …', calls: 110, execMs: 51, walBytes: 3_000 }],
      ['b', { query: 'UPDATE   events\n SET status = $1', calls: 30, execMs: 9, walBytes: 500 }],
      ['new', { query: 'SELECT now()', calls: 5, execMs: 0.5, walBytes: 0 }],
      ['idle', { query: 'SELECT 1', calls: 7, execMs: 1, walBytes: 0 }],
    ]);
    const perEvent = statementsPerEvent(before, after, 10);
    expect(perEvent?.top.map((entry) => entry.query)).toEqual(['UPDATE events SET status = $1', 'INSERT INTO events …', 'SELECT now()']);
    expect(perEvent?.top[0]).toEqual({ query: 'UPDATE events SET status = $1', calls: 2, execUs: 400, walBytes: 50 });
    expect(perEvent?.calls).toBeCloseTo(3.5);
    expect(perEvent?.execUs).toBeCloseTo(550);
    expect(statementsText(perEvent!)).toBe(
      '3.50 statements, 550 µs executing per event (pg_stat_statements); costliest: 400 µs ×2.00 UPDATE events SET status = $1; 100 µs ×1.00 INSERT INTO events …; 50 µs ×0.50 SELECT now()',
    );
  });
});
