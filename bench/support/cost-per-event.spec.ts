import { type CostReading, costPerEvent, costText, processKind, redisCpuMs } from './cost-per-event';
import { backendDeltaMs, schedstatRunMs, statCpuMs } from './proc-cpu';

const reading = (overrides: Partial<CostReading>): CostReading => ({
  processMs: [],
  backendMs: new Map(),
  redisMs: 0,
  transactions: 0,
  rowsWritten: 0,
  walBytes: 0,
  ...overrides,
});

describe('CPU and PostgreSQL cost per event', () => {
  it('divides each counter\'s change by the events, summing processes of one kind', () => {
    const before = reading({
      processMs: [
        { name: 'ingest#2', ms: 1_000 },
        { name: 'ingest#5', ms: 50 },
        { name: 'delivery-worker#3', ms: 2_000 },
      ],
      backendMs: new Map([
        [101, 500],
        [102, 700],
      ]),
      redisMs: 10_000,
      transactions: 40,
      rowsWritten: 100,
      walBytes: 1_000_000,
    });
    const after = reading({
      processMs: [
        { name: 'ingest#2', ms: 1_300 },
        { name: 'ingest#5', ms: 150 },
        { name: 'delivery-worker#3', ms: 2_800 },
      ],
      // 101 used 200 ms, 102 ended (lost), 103 started within the interval and counts from zero.
      backendMs: new Map([
        [101, 700],
        [103, 100],
      ]),
      redisMs: 10_100,
      transactions: 140,
      rowsWritten: 400,
      walBytes: 1_500_000,
    });
    const cost = costPerEvent(before, after, 1_000);
    expect(cost.processes).toEqual([
      { name: 'ingest', us: 400 },
      { name: 'worker', us: 800 },
    ]);
    expect(cost.postgresUs).toBe(300);
    expect(cost.redisUs).toBe(100);
    expect(cost.totalUs).toBe(1_600);
    expect([cost.transactions, cost.rowsWritten, cost.walBytes]).toEqual([0.1, 0.3, 500]);
    expect(costText(cost)).toBe('ingest 400 + worker 800 + PostgreSQL 300 + Redis 100 = 1,600 µs; 0.10 transactions, 0.30 rows written, 500 WAL bytes');
  });

  it('never counts a negative interval (a pid reused by a younger process) and never divides by zero events', () => {
    expect(backendDeltaMs(new Map([[7, 900]]), new Map([[7, 20]]))).toBe(0);
    const cost = costPerEvent(reading({ processMs: [{ name: 'baseline#1', ms: 5 }] }), reading({ processMs: [{ name: 'baseline#1', ms: 9 }] }), 0);
    expect(cost.processes).toEqual([{ name: 'baseline', us: 4_000 }]);
  });

  it('reads user + system ticks from /proc/<pid>/stat even when the command name holds spaces and parentheses', () => {
    const fields = ['S', '1', '2', '3', '0', '-1', '4194560', '100', '0', '0', '0', '123', '45', '0', '0', '20'];
    expect(statCpuMs(`4242 (postgres: bench (x) idle) ${fields.join(' ')}`)).toBe(1_680);
    expect(statCpuMs('garbage')).toBeNull();
  });

  it('reads a process\'s run time in ms from the nanoseconds of /proc/<pid>/schedstat', () => {
    expect(schedstatRunMs('1234567890 5000 42\n')).toBe(1_234.56789);
    expect(schedstatRunMs('')).toBeNull();
    expect(schedstatRunMs('garbage 1 2')).toBeNull();
  });

  it('reads the Redis server\'s CPU from INFO cpu in ms, and names processes by kind', () => {
    expect(redisCpuMs('# CPU\r\nused_cpu_sys:12.500000\r\nused_cpu_user:30.250000\r\nused_cpu_sys_children:9.0\r\n')).toBe(42_750);
    expect(['ingest#2', 'delivery-worker#3', 'baseline#1', 'baseline-ingest#1', 'baseline-worker#1'].map(processKind)).toEqual(['ingest', 'worker', 'baseline', 'baseline-ingest', 'baseline-worker']);
  });
});
