import { isPendingSql } from './event-lifecycle';

/** SQL expressions, in the outer query, of the event whose subject neighbour is asked for. */
export interface SubjectNeighbourOf {
  accountId: string;
  action: string;
  /** A `json` value (cast text with `::json`). */
  message: string;
  seq: string;
}

/**
 * Subquery (for a `LATERAL` join) of the nearest event of the same account and subject on one side of
 * an event (`<`: the earliest accepted before it, `>`: the next accepted after it) that is still pending
 * in its first series (redeliveries go outside the order): columns seq, status, next_attempt_at,
 * series_attempts and `alone` (no other event of the subject is pending on that side), or no row.
 * `callback_subject` (migration 1764600000000-event-subjects) is the one definition of an event's
 * subject; a null subject matches nothing, so events without one are never held. Both sides are served
 * by the partial index over pending rows (account, subject, seq), which `alone` reads one entry further.
 */
export function pendingSubjectNeighbourSql(of: SubjectNeighbourOf, side: '<' | '>'): string {
  return `
      SELECT s.seq, s.status, s.next_attempt_at, s.series_attempts, count(*) OVER () = 1 AS alone
        FROM (SELECT n.seq, n.status, n.next_attempt_at, n.series_attempts
                FROM events n
               WHERE n.account_id = ${of.accountId}
                 AND callback_subject(n.action, n.message) = callback_subject(${of.action}, ${of.message})
                 AND ${isPendingSql('n')} AND n.series = 0
                 AND n.seq ${side} ${of.seq}
               ORDER BY n.seq
               LIMIT 2) s
       ORDER BY s.seq
       LIMIT 1`;
}
