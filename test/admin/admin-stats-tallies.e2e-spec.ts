import { DataSource } from 'typeorm';
import { histogramPercentiles, LATENCY_BOUNDS_MS, LATENCY_BUCKETS, seqAt } from '@app/persistence/testing';
import { BooksFolder } from '../../apps/delivery-worker/src/retention/books-folder.service';
import { adminCall, type Json } from '../support/admin-client';
import { booksAndCounts, expectBooksToMatchRows, unfoldedEntries } from '../support/books';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { accountAnswering, useStatsApps } from '../support/stats-accounts';
import { eventRows, sendEvents, type StoredTestEvent } from '../support/worker-process';

/**
 * Own database: the all-accounts stats must hold exactly this file's events. They are read from the
 * event tallies, which the worker folds from the book entries that the statements writing events append
 * (docs/delivery-model.md); an answer adds the entries not folded yet, so it is exact whenever it is read.
 */
const suite = useStatsApps('admin-stats-tallies');
const { namespace, receivers } = suite;
const STATUSES = ['queued', 'retrying', 'delivered', 'failed', 'expired', 'filtered', 'no_endpoint'] as const;
const HOUR_MS = 3_600_000;

function database(): DataSource {
  return suite.worker.app.get(DataSource);
}

function folder(): BooksFolder {
  return suite.worker.app.get(BooksFolder, { strict: false });
}

/** Waits until every one of `events` reached delivered, failed or filtered (its primary delivery's status). */
async function settled(events: StoredTestEvent[]): Promise<void> {
  await waitFor('events to settle', async () => {
    const rows = await eventRows(suite.worker.app, events.map((event) => event.eventId));
    return rows.length === events.length && rows.every((row) => ['delivered', 'failed', 'filtered'].includes(row.status));
  });
}

/** What the stats must say, counted from the rows: statuses and the delivered events' latency histogram. */
async function exactStats(since: Date | null): Promise<{ counts: Record<string, number>; total: number; latency: number[] }> {
  const { rows } = await namespace.db.query<{ status: string; count: number; bucket: number | null }>(
    `SELECT d.status, CASE WHEN d.status = 'delivered' AND d.delivered_at IS NOT NULL
                           THEN width_bucket(GREATEST(EXTRACT(EPOCH FROM (d.delivered_at - e.created_at)) * 1000, 0),
                                             ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[]) END AS bucket,
            count(*)::int AS count
       FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
      WHERE $1::timestamptz IS NULL OR e.created_at >= $1::timestamptz
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
    delivery_latency_ms: { count: exact.latency.reduce((sum, count) => sum + count, 0), ...histogramPercentiles(exact.latency) },
  });
  return answer.body;
}

describe('GET /admin/v1/stats over every account, from the event tallies', () => {
  /** An hour well in the past, so its events are apart from the live ones. */
  const pastHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 30 * HOUR_MS;

  beforeAll(async () => {
    // The worker folds every 2 s on its own: held here, so the answers below are read with entries not
    // folded yet, and the last test folds them itself.
    await folder().beforeApplicationShutdown();
    const good = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const bad = await accountAnswering(suite.configApi, suite.worker, receivers, 500);
    const filtered = (await createAccount(suite.configApi)).id;
    await setCallbackSettings(suite.worker.app, filtered, { pushUrl: 'http://127.0.0.1:9/never', permissions: { customer_update: true } });
    const events = [
      ...(await sendEvents(suite.worker.app, good, [1, 2, 3, 4].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, bad, [5, 6].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, filtered, [{ action: 'Customer_create', message: { id: 7 } }])),
    ];
    await settled(events);

    // Hand-written rows spread over two past hours with known latencies and every status, as the
    // statements leave them (event, primary delivery, the book entry of its status); pending ones wait
    // for a retry due tomorrow (their open row), so the worker leaves them alone.
    const offsets = [5, 20, 40, 55, 65, 80, 100, 119].map((minutes) => minutes * 60_000);
    await namespace.db.query(
      `WITH rows AS (
         SELECT $1::bigint + n AS seq, 'tally-' || n AS event_id,
                (ARRAY['delivered','delivered','failed','queued','delivered','retrying','no_endpoint','delivered'])[n] AS status,
                to_timestamp(($3::float8 + (($4::float8[])[n])) / 1000) AS created_at,
                CASE WHEN n IN (1, 2, 5, 8) THEN to_timestamp(($3::float8 + (($4::float8[])[n]) + n * 700) / 1000) END AS delivered_at
           FROM generate_series(1, 8) AS n
       ),
       inserted AS (
         INSERT INTO events (seq, event_id, account_id, action, message, created_at)
         SELECT seq, event_id, $2, 'Customer_create', '{"id":1}', created_at FROM rows
       ),
       delivering AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series_attempts, delivered_at, next_attempt_at)
         SELECT seq, 'primary', $2, status, CASE WHEN status = 'queued' THEN 0 ELSE 1 END, CASE WHEN status = 'retrying' THEN 1 ELSE 0 END,
                delivered_at, CASE WHEN status IN ('queued', 'retrying') THEN now() + interval '1 day' END
           FROM rows
       ),
       opened AS (
         INSERT INTO open_deliveries (event_seq, destination_id, account_id, due_at)
         SELECT seq, 'primary', $2, now() + interval '1 day' FROM rows WHERE status IN ('queued', 'retrying')
       )
       INSERT INTO book_entries (account_id, created_at, to_status, delivered_at) SELECT $2, created_at, status, delivered_at FROM rows`,
      [seqAt(pastHour).toString(), good, pastHour, offsets],
    );
  });

  it('counts every status exactly, with and without since, on and off whole hours', async () => {
    expect(await unfoldedEntries(database())).toBeGreaterThan(0);
    await expectBooksToMatchRows(database());
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
    const { rows } = await namespace.db.query<{ event_id: string }>(
      `SELECT e.event_id FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
        WHERE d.status = 'failed' AND e.created_at > now() - interval '1 hour'`,
    );
    expect(rows.length).toBe(2);
    for (const row of rows) expect((await adminCall(suite.configApi, 'POST', `/admin/v1/events/${row.event_id}/redeliver`)).status).toBe(202);
    await waitFor('the redelivered events to fail again', async () => {
      const { rows: again } = await namespace.db.query<{ event_id: string }>(
        `SELECT e.event_id FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
          WHERE e.event_id = ANY($1::varchar[]) AND d.status = 'failed' AND d.series = 1`,
        [rows.map((row) => row.event_id)],
      );
      return again.length === 2;
    });
    await expectBooksToMatchRows(database());
    await expectStatsToMatchRows(null);
  });

  it('keeps the same answer once the book entries are folded into the tallies', async () => {
    const before = await booksAndCounts(database());
    expect(before.tallied).toEqual(before.counted);
    expect(await folder().foldOnce()).toBeGreaterThan(0);
    expect(await unfoldedEntries(database())).toBe(0);
    // Only the folder writes tallies, into one row per bucket and status (stripe 0).
    const { rows } = await namespace.db.query<{ stripes: number }>(`SELECT count(*)::int AS stripes FROM event_tallies WHERE stripe <> 0`);
    expect(rows[0].stripes).toBe(0);
    expect((await booksAndCounts(database())).tallied).toEqual(before.tallied);
    await expectStatsToMatchRows(null);
    await expectStatsToMatchRows(new Date(pastHour + 30 * 60_000));
  });
});
