import { SEQ_COUNTER_BITS, seqAt } from './partition-layout';

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

/**
 * A created_at range turned into a seq range the partitions can be pruned by, without changing the answer.
 * `select(extra)` must return a complete `SELECT … FROM events WHERE … AND ${extra}` with `seq::text AS seq`
 * among its columns and no ORDER BY (the out-of-line part stays unordered so the planner reads it
 * through the partial index; ordered, it would walk each partition's seq index instead); `bind` adds a parameter and returns its placeholder. The answer is
 * the union of the in-line rows inside the seq window (ordered and limited by seq, so a page reads only
 * the rows it returns) and the out-of-line rows outside it (found through the partial index, normally none).
 */
export function timeWindowedSelect(
  select: (extra: string) => string,
  bind: (value: unknown) => string,
  limitPlaceholder: string,
  since: Date | null,
  until: Date | null,
): string {
  // `events.seq`, not `seq`: the select names its text rendering `seq`, which would sort as text.
  if (!since && !until) return `${select('TRUE')} ORDER BY events.seq DESC LIMIT ${limitPlaceholder}`;
  const inside: string[] = [];
  const outside: string[] = [];
  if (since) {
    const from = bind(seqAt(since.getTime() - IN_LINE_TOLERANCE_MS).toString());
    inside.push(`seq >= ${from}::bigint`);
    outside.push(`seq < ${from}::bigint`);
  }
  if (until) {
    const to = bind(seqAt(until.getTime() + IN_LINE_TOLERANCE_MS).toString());
    inside.push(`seq < ${to}::bigint`);
    outside.push(`seq >= ${to}::bigint`);
  }
  return `SELECT * FROM (
      (${select(inside.join(' AND '))} ORDER BY events.seq DESC LIMIT ${limitPlaceholder})
      UNION ALL
      (${select(`${OUT_OF_LINE_PREDICATE} AND (${outside.join(' OR ')})`)})
    ) AS windowed
    ORDER BY seq::bigint DESC LIMIT ${limitPlaceholder}`;
}

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
