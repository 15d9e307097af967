import { walByTableText } from './wal-by-table';

describe('walByTableText', () => {
  it('lists each relation with its bytes, full-page images and records per event, leaving out those under a byte', () => {
    const text = walByTableText([
      { table: 'events', bytes: 1715.4, fpiBytes: 60.2, records: 7.114 },
      { table: 'transaction (no relation)', bytes: 68, fpiBytes: 0, records: 1.99 },
      { table: 'event_tallies', bytes: 0.4, fpiBytes: 0, records: 0.01 },
    ]);
    expect(text).toBe('events 1715 B (FPI 60, 7.11 records); transaction (no relation) 68 B (FPI 0, 1.99 records)');
  });
});
