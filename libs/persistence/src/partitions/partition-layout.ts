/**
 * How time maps onto the partitioned tables.
 *
 * `events.seq` is time-ordered: the insert's clock in milliseconds since the epoch, shifted left by
 * SEQ_COUNTER_BITS, plus a counter (see next_event_seq() in the partitioning migration). So a range of
 * seq IS a range of time: `events`, `deliveries` and `delivery_attempts` are partitioned by RANGE of
 * seq/event_seq with one partition per UTC day, every lookup by seq (the worker's jobs carry only
 * `eventSeq`) prunes to one partition, and a day's events, their deliveries and their attempts are
 * dropped together. `bot_calls` has no
 * such key and is partitioned by `created_at` on the same UTC days.
 */
import { seqAt } from '../event-time/event-time';

export { SEQ_COUNTER_BITS, seqAt, seqTime } from '../event-time/event-time';
export const DAY_MS = 86_400_000;

/**
 * The tables partitioned per day, with the column and kind of their partition key, and the fill factor
 * of their partitions where it is not the default: a delivery's row changes with every outcome, and
 * room on its page keeps those updates HOT (docs/delivery-model.md).
 */
export const PARTITIONED_TABLES: Record<'events' | 'delivery_attempts' | 'bot_calls' | 'deliveries', { key: string; kind: 'seq' | 'time'; fillfactor?: number }> = {
  events: { key: 'seq', kind: 'seq' },
  delivery_attempts: { key: 'event_seq', kind: 'seq' },
  bot_calls: { key: 'created_at', kind: 'time' },
  deliveries: { key: 'event_seq', kind: 'seq', fillfactor: 80 },
};
export type PartitionedTable = keyof typeof PARTITIONED_TABLES;

/**
 * The lowest and highest of `seqs` (at least one), compared as numbers: a statement's scalar bounds,
 * from which a plan kept for every call drops the partitions outside them when it starts (an array
 * of keys does not prune a kept plan). Seqs exceed what a double holds exactly.
 */
export function seqRange(seqs: readonly string[]): [string, string] {
  const values = seqs.map((seq) => BigInt(seq));
  const lowest = values.reduce((low, seq) => (seq < low ? seq : low));
  const highest = values.reduce((high, seq) => (seq > high ? seq : high));
  return [lowest.toString(), highest.toString()];
}

export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** `events_p20261123`: one partition per UTC day, named after the day it holds. */
export function dailyPartitionName(table: PartitionedTable, dayStartMs: number): string {
  return `${table}_p${new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The SQL literal bounds of a day for a table's partition key. */
export function dayBounds(table: PartitionedTable, dayStartMs: number): { from: string; to: string } {
  if (PARTITIONED_TABLES[table].kind === 'seq') {
    return { from: seqAt(dayStartMs).toString(), to: seqAt(dayStartMs + DAY_MS).toString() };
  }
  return { from: `'${new Date(dayStartMs).toISOString()}'`, to: `'${new Date(dayStartMs + DAY_MS).toISOString()}'` };
}

export function defaultPartitionName(table: PartitionedTable): string {
  return `${table}_default`;
}

export function legacyPartitionName(table: PartitionedTable): string {
  return `${table}_legacy`;
}
