import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isPendingSql } from '@app/persistence';
import type { PendingEvent } from '../outcome/delivery-store';

/**
 * The earliest event of the same account and subject accepted before this one that is still pending in
 * its first series (redeliveries go outside the order). `callback_subject` (migration
 * 1764600000000-event-subjects) is the one definition of an event's subject; a null subject matches
 * nothing, so events without one are never held. Served by the partial index over pending rows.
 */
const EARLIER_PENDING_SQL = `
  SELECT e.seq::text AS seq, e.status, e.next_attempt_at
    FROM events e
   WHERE e.account_id = $1
     AND callback_subject(e.action, e.message) = callback_subject($2::text, $3::json)
     AND ${isPendingSql('e')} AND e.series = 0
     AND e.seq < $4::bigint
   ORDER BY e.seq
   LIMIT 1`;

/** How soon a held event looks again when the event ahead of it is about to be called (queued). */
export const HELD_RECHECK_MS = 200;

/**
 * Ordering "subject" (CONTRACT §9): an event is called only when no earlier event of its subject is
 * still pending. The rows are the only state, so the order holds across any number of workers and
 * through crashes (a call repeated after a crash is still never overtaken); an event that waits for its
 * next attempt holds the later events of its subject until it ends.
 */
@Injectable()
export class SubjectOrder {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when the event may be called now; else how long to wait before asking again (ms). */
  async holdMs(event: PendingEvent, now = Date.now()): Promise<number | null> {
    if (event.series !== 0) return null;
    const [ahead] = await this.dataSource.query<{ seq: string; status: string; next_attempt_at: Date | null }[]>(EARLIER_PENDING_SQL, [
      event.accountId,
      event.action,
      event.messageText,
      event.seq,
    ]);
    if (!ahead) return null;
    // The event ahead waits for a later attempt: nothing can change before then.
    const dueIn = ahead.status === 'retrying' && ahead.next_attempt_at ? ahead.next_attempt_at.getTime() - now : 0;
    return Math.max(HELD_RECHECK_MS, dueIn + HELD_RECHECK_MS);
  }
}
