import type { Client } from 'pg';

export interface SeedEvent {
  accountId: number;
  eventId?: string;
  action?: string;
  status?: string;
  message?: Record<string, unknown>;
  attempts?: number;
  series?: number;
  seriesAttempts?: number;
  createdAt?: Date;
  deliveredAt?: Date | null;
  lastError?: string | null;
}

let seedCounter = 0;

/**
 * Events written straight to the tables, as ingest stores them (key, event, primary delivery holding its
 * status, book entry): the suite controls statuses and timings exactly.
 */
export async function seedPrimaryEvents(db: Client, events: SeedEvent[]): Promise<{ seq: string; eventId: string }[]> {
  const rows = events.map((event, ord) => {
    seedCounter += 1;
    return {
      ord,
      event_id: event.eventId ?? `seed-${Date.now()}-${seedCounter}`,
      account_id: event.accountId,
      action: event.action ?? 'Customer_create',
      status: event.status ?? 'queued',
      message: JSON.stringify(event.message ?? { id: seedCounter }),
      attempts: event.attempts ?? 0,
      series: event.series ?? 0,
      series_attempts: event.seriesAttempts ?? 0,
      created_at: (event.createdAt ?? new Date()).toISOString(),
      delivered_at: event.deliveredAt ? event.deliveredAt.toISOString() : null,
      last_error: event.lastError ?? null,
    };
  });
  // As ingest stores them: the key, the event, its primary delivery (where its status lives) and the book entry of its status.
  const result = await db.query<{ seq: string; event_id: string }>(
    `WITH r AS (
       SELECT * FROM json_to_recordset($1::json)
            AS r(event_id text, account_id int, action text, status text, message text, attempts int, series int,
                 series_attempts int, created_at timestamptz, delivered_at timestamptz, last_error text, ord bigint)
     ),
     keyed AS (
       INSERT INTO event_keys (event_id, account_id, event_seq)
       SELECT event_id, account_id, next_event_seq() FROM (SELECT * FROM r ORDER BY ord) AS in_order
       RETURNING event_id, event_seq
     ),
     inserted AS (
       INSERT INTO events (seq, event_id, account_id, action, message, created_at)
       SELECT k.event_seq, r.event_id, r.account_id, r.action, r.message::json, r.created_at FROM keyed k JOIN r USING (event_id) ORDER BY k.event_seq
       RETURNING seq, event_id
     ),
     delivering AS (
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, delivered_at, last_error, next_attempt_at)
       SELECT i.seq, 'primary', r.account_id, r.status, r.attempts, r.series, r.series_attempts, r.delivered_at, r.last_error,
              CASE WHEN r.status IN ('queued', 'retrying') THEN now() END
         FROM inserted i JOIN r USING (event_id)
     ),
     booked AS (
       INSERT INTO book_entries (account_id, created_at, to_status, delivered_at) SELECT account_id, created_at, status, delivered_at FROM r
     )
     SELECT seq::text AS seq, event_id FROM inserted`,
    [JSON.stringify(rows)],
  );
  const bySeq = new Map(result.rows.map((row) => [row.event_id, row.seq]));
  return rows.map((row) => ({ seq: bySeq.get(row.event_id) ?? '', eventId: row.event_id }));
}
