import { defineStatement } from '../statements/statement';
import { PRIMARY_DESTINATION_ID } from './delivery-lifecycle';
import type { DeliveryStepRow } from './open-deliveries.statements';

/**
 * A manual redelivery of these deliveries (single or bulk, CONTRACT §3, §11): each starts a new series
 * now (series + 1, so every job of the old series is stale, and the new first job has an id never used
 * before), its deadline counting from now (§13), with an open row due now so the reconciler finds it
 * should its job be lost. Deliveries to deleted destinations are left alone. The primary's book entries
 * move its old status back to `queued`. Answers each restarted delivery's first step.
 */
export const RESTART_DELIVERIES = defineStatement<{ seqs: string[]; destinationIds: string[] }, DeliveryStepRow>(
  'restart-deliveries',
  'plain',
  (p) => `
  WITH keys AS (
    SELECT * FROM unnest(${p.seqs}::bigint[], ${p.destinationIds}::varchar[]) AS k(event_seq, destination_id)
  ),
  old AS (
    SELECT d.event_seq, d.destination_id, d.account_id, d.status, d.delivered_at, x.expire_after_ms
      FROM keys k
      JOIN deliveries d ON d.event_seq = k.event_seq AND d.destination_id = k.destination_id
      JOIN destinations x ON x.account_id = d.account_id AND x.id = d.destination_id AND x.deleted_at IS NULL
  ),
  restarted AS (
    UPDATE deliveries d
       SET series = d.series + 1, series_attempts = 0, status = 'queued', next_attempt_at = now(), last_error = NULL,
           delivered_at = NULL, updated_at = now(),
           expires_at = CASE WHEN o.expire_after_ms IS NOT NULL THEN now() + o.expire_after_ms * interval '1 millisecond' END
      FROM old o
     WHERE d.event_seq = o.event_seq AND d.destination_id = o.destination_id
    RETURNING d.event_seq, d.destination_id, d.account_id, d.series, d.series_attempts, d.expires_at
  ),
  opened AS (
    INSERT INTO open_deliveries AS o (event_seq, destination_id, account_id, due_at, expires_at)
    SELECT event_seq, destination_id, account_id, now(), expires_at FROM restarted
    ON CONFLICT (event_seq, destination_id) DO UPDATE SET due_at = now(), held = NULL, subject = NULL, expires_at = excluded.expires_at
  ),
  booked AS (
    INSERT INTO book_entries (account_id, created_at, from_status, to_status, delivered_at)
    SELECT o.account_id, e.created_at, o.status, 'queued', o.delivered_at
      FROM old o JOIN events e ON e.seq = o.event_seq
     WHERE o.destination_id = '${PRIMARY_DESTINATION_ID}'
  )
  SELECT event_seq::text AS event_seq, account_id, destination_id, series, series_attempts FROM restarted ORDER BY event_seq`,
);
