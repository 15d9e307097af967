import { overlaps } from './partition-catalog';
import { dailyPartitionName, dayBounds, seqAt, seqRange, seqTime, utcDayStart } from './partition-layout';
import { timeWindowedSelect } from './time-window';

describe('partition layout', () => {
  const day = Date.UTC(2026, 10, 23);

  it('maps time onto seq so that a day of seq is a day of time, and back', () => {
    expect(seqAt(day)).toBe(BigInt(day) * 1_048_576n);
    expect(seqTime(seqAt(day) + 1_048_575n)).toBe(day);
    expect(seqTime(seqAt(day + 1))).toBe(day + 1);
    expect(utcDayStart(day + 86_399_999)).toBe(day);
  });

  it('names and bounds one UTC day per partition', () => {
    expect(dailyPartitionName('events', day)).toBe('events_p20261123');
    expect(dayBounds('delivery_attempts', day)).toEqual({ from: seqAt(day).toString(), to: seqAt(day + 86_400_000).toString() });
    expect(dayBounds('bot_calls', day)).toEqual({ from: "'2026-11-23T00:00:00.000Z'", to: "'2026-11-24T00:00:00.000Z'" });
  });

  it('tells overlapping ranges apart, with open ends and the default partition', () => {
    const legacy = { name: 'events_legacy', isDefault: false, from: null, to: 100n };
    const daily = { name: 'events_p', isDefault: false, from: 100n, to: 200n };
    const fallback = { name: 'events_default', isDefault: true, from: null, to: null };
    expect(overlaps(legacy, 50n, 150n)).toBe(true);
    expect(overlaps(legacy, 100n, 200n)).toBe(false);
    expect(overlaps(daily, 199n, 300n)).toBe(true);
    expect(overlaps(daily, 200n, 300n)).toBe(false);
    expect(overlaps(fallback, 0n, 1000n)).toBe(false);
  });
});

describe('timeWindowedSelect', () => {
  const select = (extra: string) => `SELECT seq::text AS seq FROM events WHERE account_id = $1 AND ${extra}`;

  it('is the plain query without a time range', () => {
    const parameters: unknown[] = [7, 51];
    const sql = timeWindowedSelect(select, (value) => `$${parameters.push(value)}`, '$2', null, null);
    expect(sql).toBe('SELECT seq::text AS seq FROM events WHERE account_id = $1 AND TRUE ORDER BY events.seq DESC LIMIT $2');
    expect(parameters).toEqual([7, 51]);
  });

  it('bounds seq by the range widened by a minute, and adds the out-of-line rows outside it', () => {
    const parameters: unknown[] = [7, 51];
    const since = new Date(Date.UTC(2026, 10, 20));
    const until = new Date(Date.UTC(2026, 10, 21));
    const sql = timeWindowedSelect(select, (value) => `$${parameters.push(value)}`, '$2', since, until);
    expect(parameters).toEqual([7, 51, seqAt(since.getTime() - 60_000).toString(), seqAt(until.getTime() + 60_000).toString()]);
    expect(sql).toContain('seq >= $3::bigint AND seq < $4::bigint ORDER BY events.seq DESC LIMIT $2');
    expect(sql).toContain('(seq < $3::bigint OR seq >= $4::bigint)');
    expect(sql).toContain('ORDER BY seq::bigint DESC LIMIT $2');
  });
});

describe('seqRange', () => {
  it('answers the lowest and highest seq as numbers, not as text', () => {
    expect(seqRange(['900', '10000', '12'])).toEqual(['12', '10000']);
  });

  it('keeps seqs beyond what a double holds exactly', () => {
    // Two seqs of the same millisecond differ only in their low bits.
    expect(seqRange(['1845620937293824001', '1845620937293824000'])).toEqual(['1845620937293824000', '1845620937293824001']);
  });

  it('bounds one seq by itself on both sides', () => {
    expect(seqRange(['42'])).toEqual(['42', '42']);
  });
});
