import { Client } from 'pg';
import type { QueryRunner } from 'typeorm';
import { PERMISSION_KEY_BY_ACTION, SAMPLE_MESSAGES } from '@app/payloads';
import { LATENCY_BOUNDS_MS, RECORD_OUTCOMES, recordOutcomesParams, ROLLED_UP_BUCKETS, Sql, STORE_EVENTS, type StoredRow, storeEventsParams, TALLIED_BUCKETS } from '@app/persistence/testing';
import { DeliveryLoader } from '../../apps/delivery-worker/src/delivery/loading/delivery-loader';
import { OutcomeStore } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { BooksFolder } from '../../apps/delivery-worker/src/retention/books-folder.service';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { expectBooksToMatchRows, unfoldedEntries } from '../support/books';
import { deliveredOutcome } from '../support/deliveries';
import { INGEST_HEADERS } from '../support/fixtures';
import { accountAnswering, useStatsApps } from '../support/stats-accounts';
import { waitFor } from '@app/testing';
import { customerEvents, eventRows, insertEvents } from '../support/worker-process';

/**
 * The statements that write events keep the event books themselves (docs/delivery-model.md): ingest's
 * store claims each id in event_keys and writes on each primary delivery the status it counts under, the
 * worker's record appends a book entry per status change, in the same statement as the rows they
 * describe; the worker's folder counts the new events from their rows and moves the entries into
 * event_tallies. No trigger on events does any of it any more. Own database: the books must
 * equal exactly this file's events.
 */
const suite = useStatsApps('event-books');
const { namespace, receivers } = suite;
let ingest: RunningApp;

beforeAll(async () => {
  ingest = await startApp(IngestModule, namespace.overrides);
  // The worker folds every 2 s on its own: held here, so the books are read with entries not folded yet,
  // then folded by the test itself (foldOnce is the folder's whole step).
  await folder().beforeApplicationShutdown();
});

afterAll(async () => {
  await ingest?.close();
});

function folder(): BooksFolder {
  return suite.worker.app.get(BooksFolder, { strict: false });
}

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${ingest.url}${path}`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

function customerCreate(accountId: number, eventId: string): Record<string, unknown> {
  return { account_id: accountId, action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create, event_id: eventId };
}

describe('the event books kept by the statements that write events', () => {
  it('tallies and claims exactly what ingest stored, single events, batches and duplicates, and what the worker then recorded, before and after a fold', async () => {
    const good = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const bad = await accountAnswering(suite.configApi, suite.worker, receivers, 500);
    const owner = new Map<string, number>();
    for (const [index, account] of [good, bad, good].entries()) {
      owner.set(`books-single-${index}`, account);
      expect((await post('/v1/events', customerCreate(account, `books-single-${index}`))).status).toBe(202);
    }
    const batch = [good, bad, good, bad].map((account, index) => customerCreate(account, `books-batch-${index}`));
    batch.forEach((event) => owner.set(String(event.event_id), Number(event.account_id)));
    expect((await post('/v1/events/batch', { events: batch })).status).toBe(202);
    // The same ids again, alone and in a batch that also repeats its own new id: duplicates, stored and tallied nowhere.
    expect((await post('/v1/events', customerCreate(good, 'books-single-0'))).status).toBe(200);
    const again = await post('/v1/events/batch', {
      events: [customerCreate(good, 'books-batch-0'), customerCreate(good, 'books-batch-4'), customerCreate(good, 'books-batch-4')],
    });
    expect(again.status).toBe(202);
    expect((again.body as { results: { status: string }[] }).results.map((result) => result.status)).toEqual(['duplicate', 'accepted', 'duplicate']);
    owner.set('books-batch-4', good);
    const ids = [...owner.keys()];

    await waitFor('every event to settle', async () => {
      const rows = await eventRows(suite.worker.app, ids);
      return rows.length === ids.length && rows.every((row) => row.status === 'delivered' || row.status === 'failed');
    });
    // Every id's key names its one event's seq and account, once.
    const { rows: keys } = await namespace.db.query<{ event_id: string; keys: number; events: number; matches: boolean }>(
      `SELECT k.event_id, count(*) OVER (PARTITION BY k.event_id)::int AS keys,
              (SELECT count(*)::int FROM events x WHERE x.event_id = k.event_id) AS events,
              k.event_seq = e.seq AND k.account_id = e.account_id AS matches
         FROM event_keys k LEFT JOIN events e ON e.event_id = k.event_id WHERE k.event_id = ANY($1::varchar[]) ORDER BY k.event_id`,
      [ids],
    );
    expect(keys).toEqual([...ids].sort().map((eventId) => ({ event_id: eventId, keys: 1, events: 1, matches: true })));
    const { rows: accounts } = await namespace.db.query<{ event_id: string; account_id: number }>(
      `SELECT event_id, account_id FROM event_keys WHERE event_id = ANY($1::varchar[])`,
      [ids],
    );
    expect(new Map(accounts.map((row) => [row.event_id, row.account_id]))).toEqual(owner);

    // Not folded yet: the readers add the entries to the (empty) tallies and get the rows' count exactly.
    expect(await unfoldedEntries(namespace.db)).toBeGreaterThan(0);
    await expectBooksToMatchRows(namespace.db);

    // Folded: the same answer from event_tallies alone; counted twice or lost if the fold were wrong.
    expect(await folder().foldOnce()).toBeGreaterThan(0);
    expect(await unfoldedEntries(namespace.db)).toBe(0);
    await expectBooksToMatchRows(namespace.db);
    const { rows: statuses } = await namespace.db.query<{ status: string; events: number }>(
      `SELECT status, sum(events)::int AS events FROM event_tallies WHERE granularity = 'hour' GROUP BY status HAVING sum(events) <> 0 ORDER BY status`,
    );
    expect(statuses).toEqual([
      { status: 'delivered', events: 5 },
      { status: 'failed', events: 3 },
    ]);
  });

  it('counts an event whose statement was still open when a fold ran only after it commits: neither lost nor counted twice', async () => {
    const account = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const slow = new Client({ connectionString: namespace.databaseUrl });
    await slow.connect();
    let seq: string;
    try {
      await slow.query('BEGIN');
      const { rows } = await slow.query<StoredRow>(
        STORE_EVENTS.text,
        STORE_EVENTS.values(
          storeEventsParams([
            { eventId: 'books-open-statement', accountId: account, action: 'Customer_create', messageText: '{"id":1}', permissionKey: PERMISSION_KEY_BY_ACTION.Customer_create, test: false, takers: [] },
          ]),
        ),
      );
      seq = rows.find((row) => row.kind === 'inserted')?.seq ?? '';
      expect(seq).not.toBe('');
      // The clock moves on past the event's seq; a fold now must leave the mark at or below it.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await folder().foldOnce();
      const { rows: marks } = await namespace.db.query<{ counted_below: string }>(`SELECT counted_below::text AS counted_below FROM book_marks`);
      expect(BigInt(marks[0].counted_below)).toBeLessThanOrEqual(BigInt(seq));
      await slow.query('COMMIT');
    } finally {
      await slow.end();
    }
    await expectBooksToMatchRows(namespace.db);
    await folder().foldOnce();
    const { rows: after } = await namespace.db.query<{ counted_below: string }>(`SELECT counted_below::text AS counted_below FROM book_marks`);
    expect(BigInt(after[0].counted_below)).toBeGreaterThan(BigInt(seq));
    await expectBooksToMatchRows(namespace.db);
  });

  it('books every write in the statement that makes it, with no trigger on events left to do it', async () => {
    const { rows: triggers } = await namespace.db.query<{ table: string; trigger: string }>(
      `SELECT t.tgrelid::regclass::text AS table, t.tgname AS trigger FROM pg_trigger t
        WHERE NOT t.tgisinternal
          AND t.tgrelid IN (SELECT 'events'::regclass UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = 'events'::regclass)`,
    );
    expect(triggers).toEqual([]);

    // Ingest's statement and the worker's record in one transaction: each leaves the books equal to the
    // rows as the transaction sees them, i.e. its entry is written by the statement itself.
    const account = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const sql = suite.worker.app.get(Sql);
    const entriesBefore = await unfoldedEntries(namespace.db);
    await sql.transaction(async (runner) => {
      const stored = await sql.rows(
        STORE_EVENTS,
        storeEventsParams([
          { eventId: 'books-in-one-transaction', accountId: account, action: 'Customer_create', messageText: '{"id":1}', permissionKey: PERMISSION_KEY_BY_ACTION.Customer_create, test: false, takers: [] },
        ]),
        runner,
      );
      const seq = stored.find((row) => row.kind === 'inserted')?.seq ?? '';
      expect(seq).not.toBe('');
      const read = (text: string) => runner.query(text) as Promise<unknown[]>;
      // Ingest appends no entry: the primary delivery carries the status the event is counted under.
      expect(await entriesIn(read)).toBe(entriesBefore);
      expect(await runner.query(`SELECT first_status FROM deliveries WHERE event_seq = $1 AND destination_id = 'primary'`, [seq])).toEqual([{ first_status: 'queued' }]);
      await expectBooksToMatchRowsWithin(sql, runner);

      const [{ created_at: createdAt }] = (await runner.query(`SELECT created_at FROM events WHERE seq = $1`, [seq])) as { created_at: Date }[];
      // Three seconds after acceptance: the middle of a latency bucket, so this checks where the entry is written, not its latency's precision.
      const delivered = deliveredOutcome(seq, account, createdAt, new Date(createdAt.getTime() + 3_000));
      expect(await sql.rows(RECORD_OUTCOMES, recordOutcomesParams([delivered]), runner)).toHaveLength(1);
      expect(await entriesIn(read)).toBe(entriesBefore + 1);
      await expectBooksToMatchRowsWithin(sql, runner);
    });
    await expectBooksToMatchRows(namespace.db);
  });

  it("books a delivered event's latency as its rows give it, right at a bucket's bound", async () => {
    const account = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const [event] = await insertEvents(suite.worker.app, account, customerEvents(1));
    // The delivery as the worker's pipeline loads it and hands it to the recorder.
    const delivery = await suite.worker.app.get(DeliveryLoader).load(event.seq);
    if (!delivery) throw new Error('the stored delivery did not load');
    // Delivered 50 ms after acceptance as the loaded delivery tells it: a bucket's lower bound (LATENCY_BOUNDS_MS).
    const bound = LATENCY_BOUNDS_MS.indexOf(50);
    expect(bound).toBeGreaterThanOrEqual(0);
    // The recorder books from the acceptance time as stored (acceptedAt), the delivered time from its clock.
    const outcome = deliveredOutcome(event.seq, account, delivery.acceptedAt, new Date(delivery.createdAt.getTime() + LATENCY_BOUNDS_MS[bound]));
    expect(await suite.worker.app.get(OutcomeStore, { strict: false }).record(outcome)).toBe(true);
    // The stored acceptance time may carry microseconds the loaded one does not: the rows' latency is what counts.
    await expectBooksToMatchRows(namespace.db);
  });

  it('books a batch of outcomes as one entry per like change, and the rollups count every delivery in it', async () => {
    const account = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const events = await insertEvents(suite.worker.app, account, customerEvents(4));
    const sql = suite.worker.app.get(Sql);
    const { rows: stored } = await namespace.db.query<{ seq: string; created_at: Date }>(
      `SELECT seq::text AS seq, created_at FROM events WHERE seq = ANY($1::bigint[])`,
      [events.map((event) => event.seq)],
    );
    const acceptedAt = (seq: string): Date => stored.find((row) => row.seq === seq)?.created_at as Date;
    const delivered = (seq: string, afterMs: number) => deliveredOutcome(seq, account, acceptedAt(seq), new Date(acceptedAt(seq).getTime() + afterMs));
    // Two deliveries in one latency bucket (2 to 5 s), one in another (20 to 50 ms), one failure.
    const [slow, slower, quick, failing] = events.map((event) => event.seq);
    const failed = { ...deliveredOutcome(failing, account, acceptedAt(failing)), status: 'failed' as const, deliveredAt: null, lastError: 'HTTP 500' };
    failed.attempt = { ...failed.attempt!, responseStatus: 500 };
    const outcomes = [delivered(slow, 3_000), delivered(slower, 3_500), delivered(quick, 40), failed];
    const entriesBefore = await unfoldedEntries(namespace.db);
    expect(await sql.rows(RECORD_OUTCOMES, recordOutcomesParams(outcomes))).toHaveLength(4);
    expect(await unfoldedEntries(namespace.db)).toBe(entriesBefore + 3);
    await expectBooksToMatchRows(namespace.db);

    const since = new Date(Date.now() - 3_600_000);
    const until = new Date(Date.now() + 3_600_000);
    const read = async () => {
      const rows = await sql.rows(ROLLED_UP_BUCKETS, { granularity: 'hour', accountId: account, since, until });
      const latency = rows.reduce((sum, row) => sum.map((count, bucket) => count + Number(row.latency_counts[bucket])), new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0));
      return {
        delivered: rows.reduce((sum, row) => sum + Number(row.delivered), 0),
        failed: rows.reduce((sum, row) => sum + Number(row.failed), 0),
        attempts: rows.reduce((sum, row) => sum + Number(row.attempts), 0),
        failedAttempts: rows.reduce((sum, row) => sum + Number(row.failed_attempts), 0),
        latency: latency.flatMap((count, bucket) => (count > 0 ? [[bucket, count]] : [])),
      };
    };
    const expected = {
      delivered: 3,
      failed: 1,
      attempts: 4,
      failedAttempts: 1,
      // Buckets by their lower bounds: 2,000 ms holds 3 s and 3.5 s; 20 ms holds 40 ms.
      latency: [
        [LATENCY_BOUNDS_MS.indexOf(20) + 1, 1],
        [LATENCY_BOUNDS_MS.indexOf(2_000) + 1, 2],
      ],
    };
    expect(await read()).toEqual(expected);
    await folder().foldOnce();
    expect(await read()).toEqual(expected);
    await expectBooksToMatchRows(namespace.db);
  });
});

async function entriesIn(read: (text: string) => Promise<unknown[]>): Promise<number> {
  const [row] = (await read(`SELECT count(*)::int AS entries FROM book_entries`)) as { entries: number }[];
  return row.entries;
}

/**
 * The books against the rows inside a transaction of the caller's, which sees its own writes: every
 * status's events over all hours as TALLIED_BUCKETS reads them (folded tallies plus entries) and as the
 * rows count them.
 */
async function expectBooksToMatchRowsWithin(sql: Sql, runner: QueryRunner): Promise<void> {
  const tallied = (await sql.rows(TALLIED_BUCKETS, { granularity: 'hour', since: '-infinity', until: null }, runner))
    .map((row) => ({ status: row.status, events: Number(row.events) }))
    .filter((row) => row.events !== 0)
    .sort((a, b) => a.status.localeCompare(b.status));
  const counted = (await runner.query(`
    SELECT d.status::text AS status, count(*)::int AS events FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
     GROUP BY 1 ORDER BY 1`)) as { status: string; events: number }[];
  expect(tallied).toEqual(counted);
}
