/*
 * Event time as seq holds it: the insert's clock in milliseconds, shifted left by SEQ_COUNTER_BITS, plus
 * a counter (next_event_seq() in the partitioning migration). A leaf of persistence: the partitions and
 * the books both read events by time through it.
 */
export const SEQ_COUNTER_BITS = 20n;

/** The lowest seq a row inserted at `ms` (epoch milliseconds) can get. */
export function seqAt(ms: number): bigint {
  return BigInt(Math.floor(ms)) << SEQ_COUNTER_BITS;
}

/** When a time-ordered seq was taken (epoch milliseconds); meaningless for pre-partitioning (legacy) seqs. */
export function seqTime(seq: bigint): number {
  return Number(seq >> SEQ_COUNTER_BITS);
}

/**
 * How far created_at may stray from the time in its seq before the row counts as "out of line". Ingest
 * stores created_at = now() (its statement's start) and draws seq from the clock in the same statement,
 * which the 15 s statement timeout bounds, so every row the service writes is in line.
 */
export const IN_LINE_TOLERANCE_MS = 60_000;

/**
 * The rows whose created_at is more than a minute away from their seq's time: legacy rows (seq from the
 * old identity), and rows written by hand with an explicit created_at (tests, imports). The partial index
 * events_out_of_line_idx on created_at holds exactly these, so it stays empty in normal operation. The
 * text must stay identical to the index predicate for the planner to use the index.
 */
export const OUT_OF_LINE_PREDICATE = `(created_at - to_timestamp(((seq >> 20) / 1000.0)::float8)) NOT BETWEEN interval '-1 minute' AND interval '1 minute'`;

/** The seq of a timestamp SQL expression moved by `shift` (an interval literal), as seqAt computes it. */
function seqAtSql(timestamp: string, shift: string): string {
  return `(floor(extract(epoch FROM ${timestamp} ${shift}) * 1000)::bigint << ${SEQ_COUNTER_BITS.toString()})`;
}

/**
 * The events (seq, created_at) accepted in [since, until), SQL expressions of timestamps, for statements
 * that count or tally by acceptance time. Daily partitions have no index on created_at (the seq holds the
 * time): the in-line rows are read by a seq range the planner prunes to the span's days, and the rows out
 * of line, outside that range, through the partial index that holds only them.
 */
export function eventsAcceptedIn(since: string, until: string): string {
  const from = seqAtSql(since, `- interval '${IN_LINE_TOLERANCE_MS} milliseconds'`);
  const to = seqAtSql(until, `+ interval '${IN_LINE_TOLERANCE_MS} milliseconds'`);
  const span = `created_at >= ${since} AND created_at < ${until}`;
  return `(SELECT seq, created_at FROM events WHERE seq >= ${from} AND seq < ${to} AND ${span}
           UNION ALL
           SELECT seq, created_at FROM events WHERE ${OUT_OF_LINE_PREDICATE} AND (seq < ${from} OR seq >= ${to}) AND ${span})`;
}
