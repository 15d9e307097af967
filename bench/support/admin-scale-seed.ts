import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DAY_MS, ensureDailyPartitions, LATENCY_BUCKETS, latencyBucketSql, RETALLY_SPAN, type Sql, STORE_EVENTS, storeEventsParams } from '@app/persistence/testing';

/**
 * The rows of bench/admin-scale.bench.ts on today's delivery model (docs/delivery-model.md): events
 * (no delivery state), one `primary` delivery each, its attempts (destination `primary`, the body's
 * encoding instead of the body), event_keys, and the books (event tallies and delivery rollups) as the
 * worker's folds would have left them. Bulk statements over generate_series, not the ingest path.
 */

/** The message search index (migration MessageScalarsSearch1766000000000). */
export const MESSAGE_INDEX = 'events_message_scalars_idx';
export const CREATE_MESSAGE_INDEX = `CREATE INDEX ${MESSAGE_INDEX} ON events USING gin (message_scalars(message) jsonb_path_ops)`;
const TARGET = 'https://receiver.example.com/hook';

export interface ScaleSizes {
  events: number;
  accounts: number;
  /** Accounts the events belong to (1 … activeAccounts). */
  activeAccounts: number;
  days: number;
}

type Timed = (what: string, work: () => Promise<unknown>) => Promise<void>;

export async function seedAdminScale(db: DataSource, sizes: ScaleSizes, timed: Timed): Promise<void> {
  const { events, accounts, activeAccounts, days } = sizes;
  await timed('accounts, primary destinations, settings', async () => {
    await db.query(
      `INSERT INTO accounts (email, name, open_api_token)
       SELECT 'user' || i || '@company' || (i % 997) || '.example.com', 'Company ' || i, 'token' FROM generate_series(1, $1::int) AS i`,
      [accounts],
    );
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, signing_secret)
       SELECT 'primary', id, 'webhook', '${TARGET}', '${TARGET}', 'JSON', 'secret' FROM accounts`,
    );
    // Customer_create is let through, so ingest's statement (the last section) queues it.
    await db.query(`INSERT INTO callback_settings (account_id, permissions) SELECT id, '{"customer_create": true}' FROM accounts`);
  });
  // A partition per day, as the workers' hourly job keeps them (migrations create today and the days ahead).
  const runner = db.createQueryRunner();
  try {
    await ensureDailyPartitions(runner, days + 1, Date.now() - days * DAY_MS);
  } finally {
    await runner.release();
  }
  // Bulk loading: the message index is built once afterwards instead of row by row.
  await db.query(`DROP INDEX IF EXISTS ${MESSAGE_INDEX}`);
  // seq follows created_at as next_event_seq() would, so rows land in their day's partition. Every
  // delivery is final: 85 % delivered at the first attempt, 10 % failed after 3 (30 s apart), 5 %
  // filtered (the permission off) without one; an attempt takes 20-2,000 ms.
  await timed('events and primary deliveries', () =>
    db.query(
      `WITH generated AS (
         SELECT i, t.created_at, (floor(extract(epoch FROM t.created_at) * 1000)::bigint << 20) | (i & 1048575) AS seq, t.status,
                CASE t.status WHEN 'delivered' THEN 1 WHEN 'failed' THEN 3 ELSE 0 END AS attempts
           FROM generate_series(1, $1::int) AS i
          CROSS JOIN LATERAL (SELECT now() - interval '${days} days' + i * (interval '${days} days' / $1::int) AS created_at,
                                     CASE WHEN i % 20 < 17 THEN 'delivered' WHEN i % 20 < 19 THEN 'failed' ELSE 'filtered' END AS status) AS t
       ),
       stored AS (
         INSERT INTO events (seq, event_id, account_id, action, message, created_at)
         SELECT seq, 'evt_scale_' || i, 1 + i % $2::int, 'Customer_create',
                json_build_object('id', i, 'customer_id', (i::bigint * 7919) % 500000, 'nick_name', 'nick ' || (i % 9973),
                                  'sub_session_id', 'ss_' || md5((i % 200000)::text),
                                  'im', json_build_object('channel', 'web', 'visitor', i % 100000),
                                  'content', 'hello, I would like to ask about order ' || (i % 77777) || ' please'),
                created_at
           FROM generated
         RETURNING seq, account_id
       )
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, delivered_at, last_error, updated_at)
       SELECT g.seq, 'primary', s.account_id, g.status, g.attempts, 0, g.attempts,
              CASE WHEN g.status = 'delivered' THEN g.done_at END,
              CASE g.status WHEN 'failed' THEN 'HTTP 503' WHEN 'filtered' THEN 'permission customer_create is off' END, g.done_at
         FROM (SELECT *, created_at + GREATEST(attempts - 1, 0) * interval '30 seconds'
                         + CASE WHEN attempts > 0 THEN (20 + seq % 1980) * interval '1 millisecond' ELSE interval '0' END AS done_at
                 FROM generated) AS g
         JOIN stored s USING (seq)`,
      [events, activeAccounts],
    ),
  );
  await timed('event keys', () => db.query(`INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM events ORDER BY event_id`));
  await timed('message search index (CREATE INDEX)', () => db.query(CREATE_MESSAGE_INDEX));
  await timed('attempts', () =>
    db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding,
                                      response_status, response_body)
       SELECT d.event_seq, 'primary', 0, n, e.created_at + (n - 1) * interval '30 seconds', (20 + d.event_seq % 1980)::int, '${TARGET}',
              '{"content-type":"application/json"}', 'json', CASE WHEN d.status = 'delivered' THEN 200 ELSE 503 END,
              CASE WHEN d.status = 'delivered' THEN 'ok' ELSE 'busy' END
         FROM deliveries d JOIN events e ON e.seq = d.event_seq CROSS JOIN LATERAL generate_series(1, d.attempts) AS n`,
    ),
  );
  // The books as FOLD_BOOKS leaves them: the event tallies counted from the rows (what the seed script and
  // retention do), the rollups from one entry per attempt at its end, the last one carrying the outcome.
  // Per-account minute rollups for the last day only (what the 1m series reads).
  await timed('event tallies', () => db.query(RETALLY_SPAN.text, RETALLY_SPAN.values({ since: new Date(Date.now() - (days + 1) * DAY_MS), until: new Date(Date.now() + DAY_MS) })));
  const histogram = Array.from({ length: LATENCY_BUCKETS }, (_, index) => `count(*) FILTER (WHERE o.delivered = 1 AND o.latency = ${index})`).join(', ');
  await timed('rollups', () =>
    db.query(
      `INSERT INTO delivery_rollups (granularity, account_id, bucket_start, delivered, failed, attempts, failed_attempts, latency_counts)
       SELECT g.granularity, s.account_id, date_trunc(g.granularity, o.at, 'UTC'), sum(o.delivered), sum(o.failed), count(*),
              count(*) - sum(o.delivered), ARRAY[${histogram}]::bigint[]
         FROM (SELECT d.account_id, a.started_at + a.duration_ms * interval '1 millisecond' AS at,
                      (a.attempt = d.attempts AND d.status = 'delivered')::int AS delivered,
                      (a.attempt = d.attempts AND d.status IN ('failed', 'expired'))::int AS failed,
                      CASE WHEN d.status = 'delivered' THEN ${latencyBucketSql('d.delivered_at', 'e.created_at')} END AS latency
                 FROM delivery_attempts a
                 JOIN deliveries d ON d.event_seq = a.event_seq AND d.destination_id = a.destination_id
                 JOIN events e ON e.seq = a.event_seq) AS o
        CROSS JOIN LATERAL (VALUES (o.account_id), (0)) AS s(account_id)
        CROSS JOIN (VALUES ('minute'), ('hour')) AS g(granularity)
        WHERE g.granularity = 'hour' OR s.account_id = 0 OR o.at >= now() - interval '1 day'
        GROUP BY 1, 2, 3`,
    ),
  );
  await timed('analyze', () => db.query('ANALYZE'));
}

/** A batch of `size` Customer_create events for accounts 1 … 1,000 as ingest hands them to its statement. */
function ingestBatch(batch: number, size: number): Parameters<typeof storeEventsParams>[0] {
  return Array.from({ length: size }, (_, index) => {
    const i = index + 1;
    const message = {
      id: i, customer_id: i * 31, nick_name: `nick ${i}`, sub_session_id: `ss_${createHash('md5').update(String(i)).digest('hex')}`,
      im: { channel: 'web', visitor: i }, content: `hello ${i}`,
    };
    return { eventId: `evt_ins_${batch}_${i}`, accountId: 1 + (i % 1000), action: 'Customer_create', messageText: JSON.stringify(message), permissionKey: 'customer_create', test: false, takers: [] };
  });
}

/** `batches` × `size` events through ingest's own statement (STORE_EVENTS: key, event, primary delivery, book entry); answers ms. */
export async function ingestBatches(sql: Sql, first: number, batches: number, size: number): Promise<number> {
  const params = Array.from({ length: batches }, (_, index) => storeEventsParams(ingestBatch(first + index, size)));
  const started = performance.now();
  for (const batch of params) {
    const rows = await sql.rows(STORE_EVENTS, batch);
    if (rows.filter((row) => row.kind === 'inserted').length !== size) throw new Error('ingest statement stored fewer events than it was given');
  }
  return performance.now() - started;
}
