import { formatValue, markdownTable, ratioOf } from './report';

describe('bench report', () => {
  it('prints each figure with its reference, the ratio and whether the target holds', () => {
    const table = markdownTable([
      {
        name: 'single-post',
        title: 'single events',
        notes: [],
        figures: [
          { label: 'accepted', value: 1500, unit: 'events/s', reference: { label: 'baseline ×1', value: 3000 }, target: { text: '≥ 3,000/s', holds: false } },
          { label: 'p99', value: 12.345, unit: 'ms', target: { text: 'p99 ≤ 50 ms', holds: true } },
        ],
      },
    ]);
    expect(table.split('\n').slice(2, 4)).toEqual([
      '| single-post | accepted | 1,500 events/s | baseline ×1: 3,000 events/s | 0.50× | ≥ 3,000/s: MISSED |',
      '| single-post | p99 | 12.3 ms |  |  | p99 ≤ 50 ms: holds |',
    ]);
  });

  it('says n/a rather than a number when nothing was measured, and gives no ratio against zero', () => {
    expect(formatValue(null, 'ms')).toBe('n/a');
    expect(formatValue(Number.NaN, 'events/s')).toBe('n/a');
    expect(ratioOf({ label: 'x', value: 5, unit: 'ms', reference: { label: 'y', value: 0 } })).toBe('');
  });
});
