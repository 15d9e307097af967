import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { deliveryRollupCte } from '@app/persistence';

const BATCHES = 200;
const BATCH_SIZE = 200;

/**
 * What keeping the rollups costs the worker: batches of 200 outcomes (90 % delivered, 10 % retrying)
 * applied by a statement shaped like RECORD_SQL's event change, with and without the rollup CTE,
 * alternating so drift hits both alike; then without the message search index (dropped here; the
 * seeding builds it again). Returns ms per batch for each.
 */
export async function measureRollupWriteCost(db: DataSource): Promise<{ withRollups: number; without: number; withoutSearchIndex: number }> {
  const [{ lowest }] = await db.query<{ lowest: number }[]>(
    `WITH inserted AS (
       INSERT INTO accounts (email, open_api_token, signing_secret)
       SELECT 'rollup' || i || '@bench.example.com', 'token', 'secret' FROM generate_series(1, 1000) AS i
       RETURNING id)
     SELECT min(id) AS lowest FROM inserted`,
  );
  const [{ first }] = await db.query<{ first: string }[]>(
    `WITH inserted AS (
       INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at)
       SELECT 'evt_rollup_' || i, $2::int + i % 1000, 'Customer_create', json_build_object('id', i), 'queued', now()
         FROM generate_series(1, $1::int) AS i
       RETURNING seq)
     SELECT min(seq)::text AS first FROM inserted`,
    [(BATCHES + BATCHES / 2) * BATCH_SIZE, lowest],
  );
  await db.query('ANALYZE events');
  const seqs = (await db.query<{ seq: string }[]>(`SELECT seq::text AS seq FROM events WHERE seq >= $1 AND event_id LIKE 'evt_rollup_%' ORDER BY seq`, [first])).map(
    (row) => row.seq,
  );
  const change = `
    changed AS (
      UPDATE events e
         SET status = v.status, attempts = e.attempts + 1, delivered_at = v.delivered_at, updated_at = now()
        FROM unnest($1::bigint[], $2::varchar[], $3::timestamptz[]) AS v(seq, status, delivered_at)
       WHERE e.seq = v.seq AND e.status IN ('queued', 'retrying')
      RETURNING v.seq, e.account_id, v.status, 1 AS attempted, e.delivered_at, e.created_at
    )`;
  const statements = { withRollups: `WITH ${change},${deliveryRollupCte('changed')} SELECT count(*) FROM changed`, without: `WITH ${change} SELECT count(*) FROM changed` };
  const totals = { withRollups: 0, without: 0, withoutSearchIndex: 0 };
  const run = async (batch: number, variant: keyof typeof totals): Promise<void> => {
    const slice = seqs.slice(batch * BATCH_SIZE, (batch + 1) * BATCH_SIZE);
    const statuses = slice.map((_, index) => (index % 10 === 0 ? 'retrying' : 'delivered'));
    const started = performance.now();
    await db.query(statements[variant === 'withRollups' ? 'withRollups' : 'without'], [
      slice,
      statuses,
      statuses.map((status) => (status === 'delivered' ? new Date() : null)),
    ]);
    totals[variant] += performance.now() - started;
  };
  for (let batch = 0; batch < BATCHES; batch += 1) await run(batch, batch % 2 === 0 ? 'withRollups' : 'without');
  // A status change is not a HOT update (status is indexed), so the message index is written again too.
  await db.query('DROP INDEX events_message_search_idx');
  for (let batch = BATCHES; batch < BATCHES + BATCHES / 2; batch += 1) await run(batch, 'withoutSearchIndex');
  // The seeded log's rollups are computed from scratch afterwards.
  await db.query('TRUNCATE delivery_rollups');
  const per = (total: number): number => total / (BATCHES / 2);
  return { withRollups: per(totals.withRollups), without: per(totals.without), withoutSearchIndex: per(totals.withoutSearchIndex) };
}
