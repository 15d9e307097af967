import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isPendingSql } from '@app/persistence';
import type { PendingEvent } from '../loading/event-loader';

/** A held delivery looks again no sooner than this and no later than MAX_HOLD_MS, and just after the one ahead is due. */
const MIN_HOLD_MS = 250;
const MAX_HOLD_MS = 30_000;
const AFTER_AHEAD_MS = 200;

/**
 * The earliest delivery to the same destination of an earlier event with the same subject that is
 * still pending (the original series only: a redelivery never holds others). A null subject matches
 * nothing, so events without one are never held. Read along the destination's pending index.
 */
const AHEAD_SQL = `
  SELECT d.next_attempt_at
    FROM destination_deliveries d
    JOIN events n ON n.seq = d.event_seq
   WHERE d.destination_id = $1 AND d.event_seq < $2 AND ${isPendingSql('d')} AND d.series = 0
     AND callback_subject(n.action, n.message) = callback_subject($3::varchar, $4::json)
   ORDER BY d.event_seq
   LIMIT 1`;

/**
 * Ordering `subject` for an extra destination (CONTRACT §9, per destination): one delivery at a time
 * per subject, in accepted order. Simpler than the primary's SubjectOrder (no release signal): a held
 * job comes back when the delivery ahead of it is next due, so it never takes an attempt out of turn.
 */
@Injectable()
export class SubjectHold {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** How long to hold this delivery, or null when nothing of its subject is pending ahead of it. */
  async holdMs(event: PendingEvent, destinationId: string): Promise<number | null> {
    const [ahead] = await this.dataSource.query<{ next_attempt_at: Date | null }[]>(AHEAD_SQL, [destinationId, event.seq, event.action, event.messageText]);
    if (!ahead) return null;
    const dueInMs = ahead.next_attempt_at ? ahead.next_attempt_at.getTime() - Date.now() + AFTER_AHEAD_MS : MIN_HOLD_MS;
    return Math.min(MAX_HOLD_MS, Math.max(MIN_HOLD_MS, dueInMs));
  }
}
