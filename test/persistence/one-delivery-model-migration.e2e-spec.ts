import { Client } from 'pg';
import {
  createDataSource,
  DAY_MS,
  GenericPlanPool,
  LOAD_DELIVERIES,
  RECORD_OUTCOMES,
  recordOutcomesParams,
  seqRange,
  Sql,
  STORE_EVENTS,
  storeEventsParams,
  utcDayStart,
} from '@app/persistence/testing';
import { expectBooksToMatchRows } from '../support/books';
import { type Catalog, catalogOf, dataOf } from '../support/migration-catalog';
import { expectOldTalliesToMatchEvents, type OldAccount, oldModel, type WrittenOldModel, writeOldModel } from '../support/migration-old-model';
import { createDayPartitionsAsBefore, MigrationDatabase } from '../support/migration-steps';

/**
 * Migration 1765500000000 (one delivery model, docs/delivery-model.md) on an installation written the
 * old way: up moves every row in place, down brings the old shape and rows back exactly, up again makes
 * the same as the first up, and the apps' statements work on what it made (then down once more, after
 * they wrote, keeps the old books right).
 */
const PREVIOUS = 'StatementsKeepEventBooks1765400000000';
const database = new MigrationDatabase('one_delivery_model');
const today = utcDayStart(Date.now());
const yesterday = today - DAY_MS;
const beforeDestinations = today - 2 * DAY_MS;
const STEP_TIMEOUT_MS = 180_000;

/** The event columns that held the primary's delivery state. */
const EVENT_DELIVERY_COLUMNS = ['status', 'attempts', 'series', 'series_attempts', 'next_attempt_at', 'updated_at', 'delivered_at', 'last_error'];
/** What moved from callback_settings to the primary destination, and from the account. */
const MOVED_SETTINGS = ['push_url', 'push_content_type', 'failing_since', 'disabled_at', 'disabled_reason', 'delivery_ordering', 'max_per_second', 'paused'];
const MOVED_SECRETS = ['signing_secret', 'previous_signing_secret', 'previous_secret_expires_at'];

/** The relations whose rows the old model held, each in a stable order. */
const OLD_RELATIONS = {
  accounts: 'id',
  callback_settings: 'account_id',
  destinations: 'id',
  events: 'seq',
  destination_deliveries: 'event_seq, destination_id COLLATE "C"',
  delivery_attempts: 'event_seq, id',
  event_keys: 'event_seq',
  event_tallies: 'granularity, bucket_start, status, stripe',
  delivery_rollups: 'granularity, account_id, bucket_start',
};
const NEW_RELATIONS = {
  accounts: 'id',
  callback_settings: 'account_id',
  destinations: 'account_id, id COLLATE "C"',
  events: 'seq',
  deliveries: 'event_seq, destination_id COLLATE "C"',
  delivery_attempts: 'event_seq, id',
  open_deliveries: 'event_seq, destination_id COLLATE "C"',
  delivery_sweep: 'id',
  event_keys: 'event_seq',
  event_tallies: 'granularity, bucket_start, status, stripe',
  delivery_rollups: 'granularity, account_id, bucket_start',
};

type Row = Record<string, unknown>;

function ymd(dayStartMs: number): string {
  return new Date(dayStartMs).toISOString().slice(0, 10).replaceAll('-', '');
}

function without(row: Row, columns: string[]): Row {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !columns.includes(column)));
}

/** The deliveries partition of an event accepted at `ms`: its day's, or the default one for the day made before destinations. */
function deliveriesPartition(ms: number): string {
  const day = utcDayStart(ms);
  return day === beforeDestinations ? 'deliveries_default' : `deliveries_p${ymd(day)}`;
}

let db: Client;
let seeded: WrittenOldModel;
let oldCatalog: Catalog;
let oldData: Record<string, Row[]>;
let firstUpCatalog: Catalog;
let firstUpData: Record<string, Row[]>;

beforeAll(async () => {
  await database.createAt(PREVIOUS);
  db = new Client({ connectionString: database.databaseUrl });
  await db.connect();
  // The days the partition job had made: today and yesterday for the three tables, and a day from before
  // destinations existed (events and attempts only).
  for (const day of [yesterday, today]) await createDayPartitionsAsBefore(db, day, ['events', 'delivery_attempts', 'destination_deliveries']);
  await createDayPartitionsAsBefore(db, beforeDestinations, ['events', 'delivery_attempts']);
  seeded = await writeOldModel(db, oldModel(today, yesterday, beforeDestinations));
  // The old triggers claimed the ids and counted the events: the books the migration starts from are right.
  await expectOldTalliesToMatchEvents(db);
  oldCatalog = await catalogOf(db);
  oldData = await dataOf(db, OLD_RELATIONS);
}, STEP_TIMEOUT_MS);

afterAll(async () => {
  await db?.end();
  await database.drop();
});

describe('migration 1765500000000 up', () => {
  beforeAll(async () => {
    expect(await database.up('OneDeliveryModel1765500000000')).toEqual(['OneDeliveryModel1765500000000']);
  }, STEP_TIMEOUT_MS);

  it('gives every account a primary destination carrying its callback settings and signing secrets', async () => {
    const expectedPrimary = (account: OldAccount): Row => {
      const settings = account.settings;
      return {
        partition: 'destinations',
        id: 'primary',
        account_id: seeded.accountId[account.key],
        type: 'webhook',
        target: settings?.push_url ?? null,
        target_shown: settings?.push_url ?? null,
        actions: null,
        filter: null,
        content_type: settings?.push_content_type ?? 'application/x-www-form-urlencoded',
        format: 'udesk',
        auth: null,
        auth_type: null,
        ordering: settings?.delivery_ordering ?? 'none',
        max_per_second: settings?.max_per_second ?? null,
        paused: settings?.paused ?? false,
        signing_secret: account.signing_secret,
        previous_signing_secret: account.previous_signing_secret,
        previous_secret_expires_at: account.previous_secret_expires_at,
        failing_since: settings?.failing_since ?? null,
        disabled_at: settings?.disabled_at ?? null,
        disabled_reason: settings?.disabled_reason ?? null,
        deleted_at: null,
        version: settings?.version ?? 0,
        created_at: account.created_at,
        updated_at: settings?.updated_at ?? account.created_at,
        retry_schedule_ms: null,
        stop_on: [],
        disable_on: [],
        expire_after_ms: null,
      };
    };
    const { rows: primaries } = await db.query(`SELECT tableoid::regclass::text AS partition, * FROM destinations WHERE id = 'primary' ORDER BY account_id`);
    expect(primaries).toEqual(seeded.accounts.map(expectedPrimary));
    // Spelled out for the accounts that differ most: the JSON one ordering by subject at a pace with a
    // previous secret, the paused form one, the disabled one, and the one that never had settings.
    const primaryOf = (key: OldAccount['key']) => primaries.find((row) => row.account_id === seeded.accountId[key]);
    expect(primaryOf('json')).toMatchObject({
      target: 'https://hooks.example.com/json?token=s3cret',
      content_type: 'JSON',
      ordering: 'subject',
      max_per_second: 25,
      previous_signing_secret: 'whsec_json_previous_fedcba9876543210',
      version: 7,
    });
    expect(primaryOf('formPaused')).toMatchObject({ content_type: 'application/x-www-form-urlencoded', paused: true });
    expect(primaryOf('disabled')).toMatchObject({ disabled_reason: 'the endpoint answered 410 Gone', failing_since: expect.any(Date), disabled_at: expect.any(Date) });
    expect(primaryOf('noUrl')).toMatchObject({ target: null, target_shown: null });
    expect(primaryOf('noSettings')).toMatchObject({ target: null, content_type: 'application/x-www-form-urlencoded', ordering: 'none', paused: false, version: 0 });

    // The extra destinations are as they were, with the new columns' defaults.
    const { rows: extras } = await db.query(`SELECT tableoid::regclass::text AS partition, * FROM destinations WHERE id <> 'primary' ORDER BY id`);
    const added = { previous_signing_secret: null, previous_secret_expires_at: null, retry_schedule_ms: null, stop_on: [], disable_on: [], expire_after_ms: null };
    expect(extras).toEqual(oldData.destinations.map((row) => ({ ...row, ...added })));

    // What stays with the account: permissions and redaction in callback_settings, the rest of the account row.
    const data = await dataOf(db, { callback_settings: 'account_id', accounts: 'id' });
    expect(data.callback_settings).toEqual(oldData.callback_settings.map((row) => without(row, MOVED_SETTINGS)));
    expect(data.accounts).toEqual(oldData.accounts.map((row) => without(row, MOVED_SECRETS)));
  });

  it("holds every event's primary state and every extra delivery in deliveries, each in its event's day", async () => {
    const { rows } = await db.query(`SELECT tableoid::regclass::text AS partition, * FROM deliveries ORDER BY event_seq, destination_id COLLATE "C"`);
    const state = (source: Row) => ({
      status: source.status,
      attempts: source.attempts,
      series: source.series,
      series_attempts: source.series_attempts,
      next_attempt_at: source.next_attempt_at,
      delivered_at: source.delivered_at,
      last_error: source.last_error,
      updated_at: source.updated_at,
    });
    const atOf = (seq: unknown) => seeded.events.find((event) => seeded.seq[event.key] === seq)!.at;
    const primaries = oldData.events.map((event) => ({
      partition: deliveriesPartition(atOf(event.seq)),
      event_seq: event.seq,
      destination_id: 'primary',
      account_id: event.account_id,
      ...state(event),
      expires_at: null,
    }));
    const extras = oldData.destination_deliveries.map((delivery) => ({
      partition: deliveriesPartition(atOf(delivery.event_seq)),
      event_seq: delivery.event_seq,
      destination_id: delivery.destination_id,
      account_id: delivery.account_id,
      ...state(delivery),
      expires_at: null,
    }));
    const bySeqAndDestination = (a: Row, b: Row) =>
      BigInt(a.event_seq as string) === BigInt(b.event_seq as string)
        ? String(a.destination_id) < String(b.destination_id)
          ? -1
          : 1
        : BigInt(a.event_seq as string) < BigInt(b.event_seq as string)
          ? -1
          : 1;
    expect(rows).toEqual([...primaries, ...extras].sort(bySeqAndDestination));
    expect(rows).toHaveLength(seeded.events.length + seeded.extraDeliveries.length);
    // Row by row for the statuses of the old model, as the test wrote them.
    const primaryOf = (key: string) => rows.find((row) => row.event_seq === seeded.seq[key] && row.destination_id === 'primary');
    expect(primaryOf('json-retrying')).toMatchObject({
      status: 'retrying',
      attempts: 2,
      series_attempts: 2,
      next_attempt_at: seeded.events.find((event) => event.key === 'json-retrying')!.next_attempt_at,
      last_error: 'HTTP 503 from the receiver',
    });
    expect(primaryOf('json-delivered')).toMatchObject({ status: 'delivered', attempts: 1, delivered_at: expect.any(Date) });
    expect(primaryOf('json-redelivered')).toMatchObject({ status: 'queued', attempts: 3, series: 1, series_attempts: 0, partition: 'deliveries_default' });
    for (const [key, status] of [['json-failed', 'failed'], ['json-filtered', 'filtered'], ['no-url', 'no_endpoint'], ['form-paused', 'queued']]) {
      expect(primaryOf(key)).toMatchObject({ status });
    }
    // The one index of deliveries is its key: every outcome is a HOT update.
    const { rows: indexes } = await db.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'deliveries'`);
    expect(indexes).toEqual([{ indexname: 'deliveries_pkey' }]);
  });

  it("names the primary in its attempts and keeps every attempt's stored body", async () => {
    const { delivery_attempts: attempts } = await dataOf(db, { delivery_attempts: 'event_seq, id' });
    expect(attempts).toEqual(
      oldData.delivery_attempts.map((attempt) => ({ ...attempt, destination_id: attempt.destination_id ?? 'primary', encoding: null })),
    );
    expect(attempts.filter((attempt) => attempt.destination_id === 'primary')).toHaveLength(seeded.attempts.filter((attempt) => attempt.destination === null).length);
  });

  it('gives every pending delivery an open row: held by a pause without a due time, the others due', async () => {
    const { rows } = await db.query(
      `SELECT event_seq, destination_id, account_id, subject, due_at, held, expires_at FROM open_deliveries ORDER BY event_seq, destination_id COLLATE "C"`,
    );
    const event = (key: string) => seeded.events.find((candidate) => candidate.key === key)!;
    const extra = (key: string, destination: string) => seeded.extraDeliveries.find((candidate) => candidate.event === key && candidate.destination === destination)!;
    const open = (key: string, destination: string, fields: { subject?: string; due_at?: Date | null; held?: string }) => ({
      event_seq: seeded.seq[key],
      destination_id: destination,
      account_id: seeded.accountId[event(key).account],
      subject: fields.subject ?? null,
      due_at: fields.due_at ?? null,
      held: fields.held ?? null,
      expires_at: null,
    });
    expect(rows).toEqual([
      // The day from before destinations: a second series has no subject.
      open('json-redelivered', 'primary', { due_at: event('json-redelivered').next_attempt_at }),
      open('json-retrying', 'dst_json_crm', { due_at: extra('json-retrying', 'dst_json_crm').next_attempt_at }),
      open('json-retrying', 'primary', { subject: 'customer:102', due_at: event('json-retrying').next_attempt_at }),
      open('json-queued', 'dst_json_crm', { due_at: extra('json-queued', 'dst_json_crm').next_attempt_at }),
      open('json-queued', 'primary', { subject: 'customer:101', due_at: event('json-queued').next_attempt_at }),
      open('form-paused', 'dst_form_paused', { held: 'paused' }),
      open('form-paused', 'primary', { held: 'paused' }),
      open('form-paused-retrying', 'primary', { due_at: event('form-paused-retrying').next_attempt_at }),
    ]);
    // Exactly the deliveries still pending, none of the final ones.
    const { rows: pending } = await db.query(
      `SELECT count(*)::int AS count FROM deliveries d WHERE d.status IN ('queued', 'retrying')
          AND NOT EXISTS (SELECT 1 FROM open_deliveries o WHERE o.event_seq = d.event_seq AND o.destination_id = d.destination_id)`,
    );
    expect(pending).toEqual([{ count: 0 }]);
    // The sweep for lost first jobs starts after every migrated event: each pending one has its open row.
    const maxSeq = seeded.events.map((candidate) => BigInt(seeded.seq[candidate.key])).reduce((high, seq) => (seq > high ? seq : high));
    expect((await db.query(`SELECT position::text AS position, cycle_floor FROM delivery_sweep`)).rows).toEqual([{ position: maxSeq.toString(), cycle_floor: null }]);
  });

  it('leaves events without delivery state, indexes over it or triggers', async () => {
    const { rows: columns } = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'events' ORDER BY ordinal_position`);
    expect(columns.map((column) => column.column_name)).toEqual(['seq', 'event_id', 'account_id', 'action', 'message', 'created_at', 'txid', 'test', 'erased']);
    const { events } = await dataOf(db, { events: 'seq' });
    expect(events).toEqual(oldData.events.map((event) => without(event, EVENT_DELIVERY_COLUMNS)));
    // No trigger on events or any of its partitions; the key-claim function is gone with them.
    const { rows: triggers } = await db.query(
      `SELECT tgrelid::regclass::text AS relation, tgname FROM pg_trigger
        WHERE NOT tgisinternal AND tgrelid IN (SELECT 'events'::regclass UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = 'events'::regclass)`,
    );
    expect(triggers).toEqual([]);
    expect((await db.query(`SELECT proname FROM pg_proc WHERE proname = 'claim_event_keys'`)).rows).toEqual([]);
    const { rows: statusIndexes } = await db.query(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'events' AND (indexdef LIKE '%status%' OR indexdef LIKE '%next_attempt_at%')`,
    );
    expect(statusIndexes).toEqual([]);
    // destination_deliveries became deliveries, its partitions renamed with it, each with room for HOT updates.
    const { rows: partitions } = await db.query(
      `SELECT c.relname AS name, c.reloptions AS options FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'deliveries'::regclass ORDER BY 1`,
    );
    expect(partitions).toEqual(
      ['deliveries_default', `deliveries_p${ymd(yesterday)}`, `deliveries_p${ymd(today)}`].map((name) => ({ name, options: ['fillfactor=80'] })),
    );
    expect((await db.query(`SELECT to_regclass('destination_deliveries') AS old`)).rows).toEqual([{ old: null }]);
    firstUpCatalog = await catalogOf(db);
    firstUpData = await dataOf(db, NEW_RELATIONS);
  });
});

describe('migration 1765500000000 down, then up again', () => {
  it('brings the old shape and every old row back exactly', async () => {
    await database.down();
    expect(await catalogOf(db)).toEqual(oldCatalog);
    expect(await dataOf(db, OLD_RELATIONS)).toEqual(oldData);
    // Spelled out: destination_deliveries and its indexes, the primary's attempts without a destination.
    const { rows: indexes } = await db.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'destination_deliveries' ORDER BY 1`);
    expect(indexes.map((index) => index.indexname)).toEqual([
      'destination_deliveries_failed_idx',
      'destination_deliveries_pending_due_idx',
      'destination_deliveries_pending_idx',
      'destination_deliveries_pkey',
    ]);
    const { rows: attempts } = await db.query(`SELECT count(*)::int AS count FROM delivery_attempts WHERE destination_id IS NULL`);
    expect(attempts).toEqual([{ count: seeded.attempts.filter((attempt) => attempt.destination === null).length }]);
    // The old key claim refuses a taken id with its own words again.
    await expect(
      db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ('json-delivered', $1, 'Customer_create', '{}')`, [seeded.accountId.noUrl]),
    ).rejects.toMatchObject({ code: '23505', constraint: 'event_keys_pkey', message: 'event_id json-delivered is already taken' });
  }, STEP_TIMEOUT_MS);

  it('makes the same shape and rows as the first up', async () => {
    expect(await database.up('OneDeliveryModel1765500000000')).toEqual(['OneDeliveryModel1765500000000']);
    expect(await catalogOf(db)).toEqual(firstUpCatalog);
    expect(await dataOf(db, NEW_RELATIONS)).toEqual(firstUpData);
  }, STEP_TIMEOUT_MS);
});

describe('the apps on the migrated rows', () => {
  let newSeq = '';

  // The apps run on the latest schema: the migrations after this one, applied as a release would.
  beforeAll(async () => {
    await database.up();
  }, STEP_TIMEOUT_MS);

  it('keeps the books as they were: the tallies the old triggers kept equal the counts of the primary deliveries', async () => {
    // Read as the apps read them, on the schema they read (later migrations count new events from rows).
    await expectBooksToMatchRows(db);
  });

  it("stores, loads and records through the apps' own statements", async () => {
    const dataSource = createDataSource(database.databaseUrl, { poolSize: 2 });
    await dataSource.initialize();
    const plans = new GenericPlanPool(dataSource);
    const sql = new Sql(dataSource, plans);
    try {
      // The worker's load: a migrated primary delivery waiting for its retry, and a migrated extra one.
      const keys = [seeded.seq['json-retrying'], seeded.seq['json-queued']];
      const [lowSeq, highSeq] = seqRange(keys);
      const loaded = await sql.rows(LOAD_DELIVERIES, { seqs: keys, destinationIds: ['primary', 'dst_json_crm'], lowSeq, highSeq });
      expect(loaded.sort((a, b) => (a.seq < b.seq ? -1 : 1))).toEqual(
        [
          {
            seq: seeded.seq['json-retrying'],
            destination_id: 'primary',
            account_id: seeded.accountId.json,
            status: 'retrying',
            attempts: 2,
            series: 0,
            series_attempts: 2,
            expires_at: null,
            event_id: 'json-retrying',
            action: 'Customer_update',
            message_text: '{"id":102}',
            created_at: new Date(seeded.events.find((event) => event.key === 'json-retrying')!.at),
            accepted_at: expect.any(String),
            test: false,
            erased: false,
            has_open: true,
            subject: 'customer:102',
          },
          {
            seq: seeded.seq['json-queued'],
            destination_id: 'dst_json_crm',
            account_id: seeded.accountId.json,
            status: 'queued',
            attempts: 0,
            series: 0,
            series_attempts: 0,
            expires_at: null,
            event_id: 'json-queued',
            action: 'Customer_create',
            message_text: '{"id":101}',
            created_at: new Date(seeded.events.find((event) => event.key === 'json-queued')!.at),
            accepted_at: expect.any(String),
            test: false,
            erased: false,
            has_open: true,
            subject: null,
          },
        ].sort((a, b) => (a.seq < b.seq ? -1 : 1)),
      );

      // The worker's record: the retrying primary delivered at its third attempt.
      const deliveredAt = new Date();
      const recorded = await sql.rows(
        RECORD_OUTCOMES,
        recordOutcomesParams([
          {
            seq: seeded.seq['json-retrying'],
            destinationId: 'primary',
            accountId: seeded.accountId.json,
            series: 0,
            seriesAttempts: 2,
            createdAt: loaded.find((row) => row.destination_id === 'primary')!.created_at,
            status: 'delivered',
            nextAttemptAt: null,
            deliveredAt,
            lastError: null,
            attempt: {
              attempt: 3,
              startedAt: deliveredAt,
              durationMs: 12,
              url: 'https://hooks.example.com/json?token=s3cret',
              requestHeaders: { 'webhook-id': 'json-retrying' },
              encoding: 'json',
              responseStatus: 200,
              responseHeaders: {},
              responseBody: 'ok',
              error: null,
            },
            open: { kind: 'close' },
          },
        ]),
      );
      expect(recorded.map((row) => [row.seq, row.destination_id])).toEqual([[seeded.seq['json-retrying'], 'primary']]);
      const { rows: delivery } = await db.query(
        `SELECT status, attempts, series_attempts, next_attempt_at, last_error FROM deliveries WHERE event_seq = $1 AND destination_id = 'primary'`,
        [seeded.seq['json-retrying']],
      );
      expect(delivery).toEqual([{ status: 'delivered', attempts: 3, series_attempts: 3, next_attempt_at: null, last_error: null }]);
      const { rows: attempts } = await db.query(
        `SELECT attempt, destination_id, encoding, request_body IS NOT NULL AS body_stored FROM delivery_attempts WHERE event_seq = $1 AND destination_id = 'primary' ORDER BY attempt`,
        [seeded.seq['json-retrying']],
      );
      expect(attempts).toEqual([
        { attempt: 1, destination_id: 'primary', encoding: null, body_stored: true },
        { attempt: 2, destination_id: 'primary', encoding: null, body_stored: true },
        { attempt: 3, destination_id: 'primary', encoding: 'json', body_stored: false },
      ]);
      const { rows: open } = await db.query(`SELECT destination_id FROM open_deliveries WHERE event_seq = $1`, [seeded.seq['json-retrying']]);
      expect(open).toEqual([{ destination_id: 'dst_json_crm' }]);

      // Ingest's store: a new event for the migrated account (its primary and its extra destination take
      // it, the primary's subject order opens it), and an id taken before the migration answers as existing.
      const stored = await sql.rows(
        STORE_EVENTS,
        storeEventsParams(
          ['after-migration', 'json-delivered'].map((eventId) => ({
            eventId,
            accountId: seeded.accountId.json,
            action: 'Customer_create',
            messageText: '{"id":106}',
            permissionKey: 'customer_create',
            test: false,
            takers: ['dst_json_crm'],
          })),
        ),
      );
      newSeq = stored.find((row) => row.kind === 'inserted')?.seq ?? '';
      expect(stored.filter((row) => row.kind !== 'account').map(({ kind, event_id, destination_id }) => ({ kind, event_id, destination_id })).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))).toEqual([
        { kind: 'existing', event_id: 'json-delivered', destination_id: null },
        { kind: 'inserted', event_id: 'after-migration', destination_id: null },
        { kind: 'queued', event_id: null, destination_id: 'dst_json_crm' },
        { kind: 'queued', event_id: null, destination_id: 'primary' },
      ]);
      const { rows: fresh } = await db.query(
        `SELECT d.destination_id, d.status, o.subject FROM deliveries d LEFT JOIN open_deliveries o USING (event_seq, destination_id)
          WHERE d.event_seq = $1 ORDER BY d.destination_id COLLATE "C"`,
        [newSeq],
      );
      expect(fresh).toEqual([
        { destination_id: 'dst_json_crm', status: 'queued', subject: null },
        { destination_id: 'primary', status: 'queued', subject: 'customer:106' },
      ]);
      await expectBooksToMatchRows(db);
    } finally {
      await plans.onApplicationShutdown();
      await dataSource.destroy();
    }
  }, STEP_TIMEOUT_MS);

  it('goes down after the apps wrote: their book entries are folded first, so the old tallies match the events', async () => {
    expect(Number((await db.query(`SELECT count(*) AS count FROM book_entries`)).rows[0].count)).toBeGreaterThan(0);
    // The later migrations go first, as a rollback of the release would take them.
    await database.downThrough('OneDeliveryModel1765500000000');
    expect(await catalogOf(db)).toEqual(oldCatalog);
    await expectOldTalliesToMatchEvents(db);
    const { rows: events } = await db.query(
      `SELECT event_id, status, attempts, series_attempts, next_attempt_at = created_at AS due_at_acceptance FROM events WHERE seq = ANY($1::bigint[]) ORDER BY seq`,
      [[seeded.seq['json-retrying'], newSeq]],
    );
    expect(events).toEqual([
      { event_id: 'json-retrying', status: 'delivered', attempts: 3, series_attempts: 3, due_at_acceptance: null },
      { event_id: 'after-migration', status: 'queued', attempts: 0, series_attempts: 0, due_at_acceptance: true },
    ]);
    // The attempt recorded without a body comes back with an empty one, for the primary (no destination).
    const { rows: attempt } = await db.query(`SELECT destination_id, request_body FROM delivery_attempts WHERE event_seq = $1 AND attempt = 3`, [
      seeded.seq['json-retrying'],
    ]);
    expect(attempt).toEqual([{ destination_id: null, request_body: '' }]);
    const { rows: extra } = await db.query(
      `SELECT d.status, d.created_at = e.created_at AS created_with_event FROM destination_deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.event_seq = $1`,
      [newSeq],
    );
    expect(extra).toEqual([{ status: 'queued', created_with_event: true }]);
  }, STEP_TIMEOUT_MS);
});
