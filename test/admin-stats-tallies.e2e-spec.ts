import { DataSource } from 'typeorm';
import { foldEventTallies, histogramQuantile, HOUR_MS, LATENCY_BOUNDS_MS, LATENCY_BUCKETS, seqAt } from '@app/persistence';
import { adminCall, type Json } from './support/admin-client';
import { expectTalliesToMatchEvents, talliesAndCounts } from './support/event-tallies';
import { createAccount, setCallbackSettings } from './support/fixtures';
import { waitFor } from './support/wait-for';
import { accountAnswering, settled, useStatsApps } from './support/stats-accounts';
import { sendEvents } from './support/worker-process';

/** Own database: the all-accounts stats must hold exactly this file's events. */
const suite = useStatsApps('admin-stats-tallies');
const { namespace, receivers } = suite;
const STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'filtered', 'no_endpoint'] as const;

function database(): DataSource {
  return suite.worker.app.get(DataSource);
}

/** What the stats must say, counted from the rows: statuses and the delivered events' latency histogram. */
async function exactStats(since: Date | null): Promise<{ counts: Record<string, number>; total: number; latency: number[] }> {
  const { rows } = await namespace.db.query<{ status: string; count: number; bucket: number | null }>(
    `SELECT status, CASE WHEN status = 'delivered' AND delivered_at IS NOT NULL
                         THEN width_bucket(GREATEST(EXTRACT(EPOCH FROM (delivered_at - created_at)) * 1000, 0),
                                           ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[]) END AS bucket,
            count(*)::int AS count
       FROM events WHERE $1::timestamptz IS NULL OR created_at >= $1::timestamptz
      GROUP BY 1, 2`,
    [since],
  );
  const counts: Record<string, number> = Object.fromEntries(STATUSES.map((status) => [status, 0]));
  const latency = new Array<number>(LATENCY_BUCKETS).fill(0);
  for (const row of rows) {
    counts[row.status] += row.count;
    if (row.bucket !== null) latency[row.bucket] += row.count;
  }
  return { counts, total: rows.reduce((sum, row) => sum + row.count, 0), latency };
}

async function expectStatsToMatchRows(since: Date | null): Promise<Json> {
  const query = since ? `?since=${encodeURIComponent(since.toISOString())}` : '';
  const answer = await adminCall(suite.configApi, 'GET', `/admin/v1/stats${query}`);
  expect(answer.status).toBe(200);
  const exact = await exactStats(since);
  expect(answer.body).toEqual({
    account_id: null,
    since: since ? since.toISOString() : null,
    total: exact.total,
    counts: exact.counts,
    delivery_latency_ms: {
      count: exact.latency.reduce((sum, count) => sum + count, 0),
      p50: histogramQuantile(exact.latency, 0.5),
      p95: histogramQuantile(exact.latency, 0.95),
      p99: histogramQuantile(exact.latency, 0.99),
    },
  });
  return answer.body;
}

describe('GET /admin/v1/stats over every account, from the event tallies', () => {
  /** An hour well in the past, so its events are apart from the live ones. */
  const pastHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 30 * HOUR_MS;

  beforeAll(async () => {
    const good = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const bad = await accountAnswering(suite.configApi, suite.worker, receivers, 500);
    const filtered = (await createAccount(suite.configApi)).id;
    await setCallbackSettings(suite.worker.app, filtered, { pushUrl: 'http://127.0.0.1:9/never', permissions: { customer_update: true } });
    const events = [
      ...(await sendEvents(suite.worker.app, good, [1, 2, 3, 4].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, bad, [5, 6].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, filtered, [{ action: 'Customer_create', message: { id: 7 } }])),
    ];
    await settled(namespace, events);

    // Hand-written rows spread over two past hours with known latencies and every status, pending ones due
    // tomorrow so the worker leaves them alone.
    const offsets = [5, 20, 40, 55, 65, 80, 100, 119].map((minutes) => minutes * 60_000);
    await namespace.db.query(
      `INSERT INTO events (seq, event_id, account_id, action, message, status, attempts, created_at, delivered_at, next_attempt_at)
       SELECT $1::bigint + n, 'tally-' || n, $2, 'Customer_create', '{"id":1}', (ARRAY['delivered','delivered','failed','queued','delivered','retrying','no_endpoint','delivered'])[n],
              1, to_timestamp(($3::float8 + (($4::float8[])[n])) / 1000),
              CASE WHEN n IN (1, 2, 5, 8) THEN to_timestamp(($3::float8 + (($4::float8[])[n]) + n * 700) / 1000) END,
              CASE WHEN n IN (4, 6) THEN now() + interval '1 day' END
         FROM generate_series(1, 8) AS n`,
      [seqAt(pastHour).toString(), good, pastHour, offsets],
    );
  });

  it('counts every status exactly, with and without since, on and off whole hours', async () => {
    await expectTalliesToMatchEvents(database());
    const all = await expectStatsToMatchRows(null);
    expect(all.total).toBe(15);
    expect(all.counts).toMatchObject({ delivered: 8, failed: 3, filtered: 1, queued: 1, retrying: 1, no_endpoint: 1 });
    // Part of the first hour (counted from rows), the next whole hour and the live events (from the tallies).
    const partial = await expectStatsToMatchRows(new Date(pastHour + 30 * 60_000));
    expect(partial.total).toBe(7 + 6);
    // On a whole minute (minute tallies up to the hour), on a whole hour (hour tallies only), in the future.
    expect((await expectStatsToMatchRows(new Date(pastHour + 55 * 60_000))).total).toBe(5 + 7);
    expect((await expectStatsToMatchRows(new Date(pastHour + 55 * 60_000 + 1))).total).toBe(4 + 7);
    await expectStatsToMatchRows(new Date(pastHour + HOUR_MS));
    await expectStatsToMatchRows(new Date(Date.now() + HOUR_MS));
  });

  it('follows redelivery through the worker and back', async () => {
    const { rows } = await namespace.db.query<{ event_id: string }>(`SELECT event_id FROM events WHERE status = 'failed' AND created_at > now() - interval '1 hour'`);
    expect(rows.length).toBe(2);
    for (const row of rows) expect((await adminCall(suite.configApi, 'POST', `/admin/v1/events/${row.event_id}/redeliver`)).status).toBe(202);
    await waitFor('the redelivered events to fail again', async () => {
      const { rows: again } = await namespace.db.query<{ event_id: string }>(
        `SELECT event_id FROM events WHERE event_id = ANY($1::varchar[]) AND status = 'failed' AND series = 1`,
        [rows.map((row) => row.event_id)],
      );
      return again.length === 2;
    });
    await expectTalliesToMatchEvents(database());
    await expectStatsToMatchRows(null);
  });

  it('keeps the same answer once the per-connection stripes are folded into one row per hour', async () => {
    const before = await talliesAndCounts(database());
    const runner = database().createQueryRunner();
    try {
      expect(await foldEventTallies(runner, Date.now() + 2 * HOUR_MS)).toBeGreaterThan(0);
    } finally {
      await runner.release();
    }
    const { rows } = await namespace.db.query<{ stripes: number }>(`SELECT count(*)::int AS stripes FROM event_tallies WHERE stripe <> 0`);
    expect(rows[0].stripes).toBe(0);
    expect((await talliesAndCounts(database())).tallied).toEqual(before.tallied);
    await expectStatsToMatchRows(null);
    await expectStatsToMatchRows(new Date(pastHour + 30 * 60_000));
  });
});
