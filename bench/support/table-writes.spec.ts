import { parentTable } from './table-writes';

describe('parentTable', () => {
  it('names the partitioned table of a daily, monthly, default or legacy partition, and leaves other tables alone', () => {
    expect(parentTable('events_p20261129')).toBe('events');
    expect(parentTable('delivery_attempts_p20261129')).toBe('delivery_attempts');
    expect(parentTable('audit_log_p202611')).toBe('audit_log');
    expect(parentTable('deliveries_default')).toBe('deliveries');
    expect(parentTable('events_legacy')).toBe('events');
    expect(parentTable('open_deliveries')).toBe('open_deliveries');
    expect(parentTable('event_keys')).toBe('event_keys');
  });
});
