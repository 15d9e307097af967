import { IN_LINE_TOLERANCE_MS, OUT_OF_LINE_PREDICATE, seqAt } from '../event-time/event-time';

export { eventsAcceptedIn, IN_LINE_TOLERANCE_MS, OUT_OF_LINE_PREDICATE } from '../event-time/event-time';

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
