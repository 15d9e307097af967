/**
 * The books kept on `events` beside the rows themselves: the status tallies (event_tallies, migration
 * 1764400000000) and the claimed ids (event_keys, 1764500000000). Statement-level triggers with
 * transition tables keep them for any writer that inserts events. Ingest's store, the hot writer,
 * keeps them inside its own statement instead (it claims its ids there anyway, and counts its new
 * events into the tallies without the latency histogram's work) and says so with
 * `statementKeepsBooksSql`; the two insert triggers then stand aside for that statement (migration
 * 1765400000000). At one event a statement they were ~40 % of its insert (bench/path-cost/event-path-cost.ts).
 */

const BOOKS_KEPT_SETTING = 'app.event_books_kept_at';

/**
 * An expression to evaluate in a statement's RETURNING list (so once per row it wrote, before the
 * statement's AFTER STATEMENT triggers are queued): marks the books as kept by the statement running
 * now. The mark is the statement's start time, so it lapses with the statement even inside a longer
 * transaction: a later statement there is tallied and checked by the triggers as usual.
 */
export const statementKeepsBooksSql = `set_config('${BOOKS_KEPT_SETTING}', statement_timestamp()::text, true)`;

/** The triggers' WHEN: this statement has not said it keeps the books itself. */
export const BOOKS_NOT_KEPT_BY_STATEMENT_SQL = `current_setting('${BOOKS_KEPT_SETTING}', true) IS DISTINCT FROM statement_timestamp()::text`;

/**
 * The tallies' share of new events that carry no delivery latency yet (not delivered): counted per
 * bucket and status, without the histogram's work. `source` holds their created_at and status.
 */
export function newEventTallySql(source: string): string {
  return `INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events)
          SELECT g.granularity, date_trunc(g.granularity, src.created_at, 'UTC'), src.status::text, pg_backend_pid(), count(*)
            FROM ${source} CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
           GROUP BY 1, 2, 3
           ORDER BY 1, 2, 3
          ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE SET events = t.events + excluded.events`;
}
