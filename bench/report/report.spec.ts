import { atLeast, atMost, type Figure, type ScenarioResult } from '../scenarios/scenario';
import type { CostPerEvent } from '../support/cost-per-event';
import { costTable, formatValue, markdownTable, ratioOf, targetTally, verdict } from './report';

const figure = (target: Figure['target']): Figure => ({ label: 'x', value: 1, unit: 'ratio', target });

describe('bench report', () => {
  it('prints each figure with its reference, the ratio and whether the target held', () => {
    const table = markdownTable([
      {
        name: 'single-post',
        title: 'single events',
        notes: [],
        figures: [
          { label: 'accepted', value: 1500, unit: 'events/s', reference: { label: 'baseline ×1', value: 3000 }, target: atLeast(1500, 3_000, '≥ 3,000/s') },
          { label: 'p99', value: 12.345, unit: 'ms', target: atMost(12.345, 50, 'p99 ≤ 50 ms') },
        ],
      },
    ]);
    expect(table.split('\n').slice(2, 4)).toEqual([
      '| single-post | accepted | 1,500 events/s | baseline ×1: 3,000 events/s | 0.50× | ≥ 3,000/s: MISSED |',
      '| single-post | p99 | 12.3 ms |  |  | p99 ≤ 50 ms: held |',
    ]);
    expect(table).toContain('targets: 1 held, 1 missed, 0 not measured, of 2');
  });

  it('grades at the target itself: the pass line is the figure the target names, not a looser one', () => {
    expect(verdict(figure(atLeast(0.85, 0.85, '≥ 0.85')))).toBe('≥ 0.85: held');
    expect(verdict(figure(atLeast(0.849, 0.85, '≥ 0.85')))).toBe('≥ 0.85: MISSED');
    expect(verdict(figure(atLeast(0.6, 0.85, '≥ 0.85')))).toBe('≥ 0.85: MISSED');
    expect(verdict(figure(atMost(2, 2, '≤ 2×')))).toBe('≤ 2×: held');
    expect(verdict(figure(atMost(2.01, 2, '≤ 2×')))).toBe('≤ 2×: MISSED');
    expect(verdict(figure(atMost(Number.NaN, 2, '≤ 2×')))).toBe('≤ 2×: not measured');
    expect(verdict(figure(atLeast(null, 3_000, '≥ 3,000/s')))).toBe('≥ 3,000/s: not measured');
    expect(verdict({ label: 'x', value: 1, unit: 'ms' })).toBe('');
  });

  it('counts every target of the run, missed ones included', () => {
    const results: ScenarioResult[] = [
      { name: 'a', title: '', notes: [], figures: [figure(atLeast(1, 2, 'a')), figure(atMost(1, 2, 'b')), { label: 'plain', value: 3, unit: 'ms' }] },
      { name: 'b', title: '', notes: [], figures: [figure(atLeast(null, 2, 'c')), figure(atLeast(0, 1, 'd'))] },
    ];
    expect(targetTally(results)).toBe('targets: 1 held, 2 missed, 1 not measured, of 4');
  });

  it('puts each phase\'s cost per event in a table of its own', () => {
    const cost: CostPerEvent = { events: 10, processes: [{ name: 'ingest', us: 310.4 }, { name: 'worker', us: 690 }], postgresUs: 400, redisUs: 90, totalUs: 1_490.4, transactions: 1.02, rowsWritten: 3, walBytes: 1_234.4 };
    const table = costTable([{ name: 'single-post', title: '', notes: [], figures: [], costs: [{ label: 'service', cost }] }]);
    expect(table.split('\n')[2]).toBe('| single-post | service | ingest 310 + worker 690 | 400 | 90 | 1,490 | 1.02 | 3.00 | 1,234 |');
    expect(costTable([{ name: 'x', title: '', notes: [], figures: [] }])).toBe('');
  });

  it('says n/a rather than a number when nothing was measured, and gives no ratio against zero', () => {
    expect(formatValue(null, 'ms')).toBe('n/a');
    expect(formatValue(Number.NaN, 'events/s')).toBe('n/a');
    expect(ratioOf({ label: 'x', value: 5, unit: 'ms', reference: { label: 'y', value: 0 } })).toBe('');
  });
});
