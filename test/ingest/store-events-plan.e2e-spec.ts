import type { DataSource } from 'typeorm';
import { createDataSource, ensureDatabase, type EventToStore, GenericPlanPool, runMigrations, STORE_EVENTS, storeEventsParams } from '@app/persistence/testing';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { dropDatabase } from '../support/worker-databases';

/** As many accounts as the bench holds, each with its push URL: enough for a join per destination to show. */
const ACCOUNTS = 23;
const BATCH = 500;

/**
 * Ingest's statement runs under one kept generic plan, which guesses 10 rows for every unnested array.
 * A join between two of the statement's own row sets then runs as a nested loop, quadratic in the
 * batch: a 500-event batch once compared 6 million pairs of rows and took 2 s. Counted here, not timed:
 * the rows a plan compares and throws away, and how each table is reached.
 */
describe('ingest\'s statement under its kept plan', () => {
  const databaseUrl = new URL(process.env.DATABASE_URL ?? '');
  databaseUrl.pathname = `${databaseUrl.pathname}_store_plan`;
  let dataSource: DataSource;
  let pool: GenericPlanPool;
  let accountIds: number[];

  beforeAll(async () => {
    await ensureDatabase(databaseUrl.toString());
    await runMigrations(databaseUrl.toString());
    dataSource = await createDataSource(databaseUrl.toString(), { poolSize: 1 }).initialize();
    pool = new GenericPlanPool(dataSource);
    // Not analysed, as on a fresh install: the planner knows nothing of these tables' sizes.
    accountIds = (
      await dataSource.query<{ id: number }[]>(
        `INSERT INTO accounts (email, open_api_token) SELECT 'plan-' || n || '@example.com', 't' FROM generate_series(1, ${ACCOUNTS}) AS n RETURNING id`,
      )
    ).map((row) => row.id);
    await dataSource.query(`INSERT INTO callback_settings (account_id, permissions) SELECT unnest($1::int[]), '{"customer_create": true}'`, [accountIds]);
    await dataSource.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, ordering, signing_secret)
       SELECT 'primary', id, 'webhook', 'http://127.0.0.1:9/hook', 'http://127.0.0.1:9/hook', 'JSON', 'udesk', 'none', 's' FROM unnest($1::int[]) AS id`,
      [accountIds],
    );
  });

  afterAll(async () => {
    await pool?.onApplicationShutdown();
    await dataSource?.destroy();
    await dropDatabase(databaseUrl.toString());
  });

  function batch(tag: string, size: number): EventToStore[] {
    const messageText = JSON.stringify(SAMPLE_MESSAGES.Customer_create);
    return Array.from({ length: size }, (_, index) => ({
      eventId: `${tag}-${index}`,
      accountId: accountIds[index % accountIds.length],
      action: 'Customer_create',
      messageText,
      permissionKey: 'customer_create',
      test: false,
      takers: [],
    }));
  }

  it('stores a batch of 500 over 23 accounts comparing no pair of its own rows, each account\'s rows found by key', async () => {
    // Run under the plan GenericPlanPool keeps, as ingest runs it.
    const plan = await pool.keptPlan(STORE_EVENTS.text, STORE_EVENTS.values(storeEventsParams(batch('plan', BATCH))), true);

    const compared = plan.map((line) => /^Rows Removed by Join Filter: (\d+)$/.exec(line)).reduce((sum, match) => sum + Number(match?.[1] ?? 0), 0);
    expect(compared).toBeLessThan(BATCH);
    for (const table of ['accounts', 'callback_settings', 'destinations']) {
      const reads = plan.flatMap((line, index) => (new RegExp(`Scan.* on ${table} `).test(line) ? [index] : []));
      expect(reads.length).toBeGreaterThan(0);
      for (const index of reads) {
        expect(plan[index]).toMatch(new RegExp(`^(-> +)?Index Scan using \\S+ on ${table} `));
        expect(plan[index + 1]).toMatch(/^Index Cond: \(\(?(account_)?id = /);
      }
    }

    // And it did its work: every event stored, each with its primary delivery and the status the books count it under, and no book entry.
    const [stored] = await dataSource.query<{ events: number; deliveries: number; accepted: number; entries: number }[]>(
      `SELECT (SELECT count(*) FROM events WHERE event_id LIKE 'plan-%')::int AS events,
              (SELECT count(*) FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.event_id LIKE 'plan-%' AND d.status = 'queued')::int AS deliveries,
              (SELECT count(*) FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.event_id LIKE 'plan-%' AND d.first_status = 'queued')::int AS accepted,
              (SELECT coalesce(sum(events), 0) FROM book_entries)::int AS entries`,
    );
    expect(stored).toEqual({ events: BATCH, deliveries: BATCH, accepted: BATCH, entries: 0 });
  });

  it('finds who owns the ids a batch repeats by key, not by reading every id the service holds', async () => {
    // The plan is kept for the connection's life: made while event_keys is small (a fresh install), a
    // scan of the whole table would still run on every repeated id once it holds months of ids.
    const repeated = [...batch('plan', 5), ...batch('again', 5)];
    const plan = await pool.keptPlan(STORE_EVENTS.text, STORE_EVENTS.values(storeEventsParams(repeated)), true);

    const reads = plan.flatMap((line, index) => (/Scan.* on event_keys /.test(line) ? [index] : []));
    expect(reads.length).toBeGreaterThan(0);
    for (const index of reads) {
      expect(plan[index]).toMatch(/^(-> +)?Index (Only )?Scan using event_keys_pkey on event_keys /);
      expect(plan[index + 1]).toMatch(/^Index Cond: \(\(?event_id\)?(::text)? = /);
    }
    const [owners] = await dataSource.query<{ again: number }[]>(`SELECT count(*)::int AS again FROM events WHERE event_id LIKE 'again-%'`);
    expect(owners.again).toBe(5);
  });
});
