import { ALL_ACCOUNTS, FOLD_BOOKS, LATENCY_BOUNDS_MS, ROLLED_UP_BUCKETS, type RollupRow, type Statement, TALLIED_BUCKETS } from '@app/persistence/testing';
import { IsolatedNamespace } from '../support/isolated-namespace';

/**
 * FOLD_BOOKS sums the book entries by the buckets both books keep before it builds their histograms. The
 * readers (TALLIED_BUCKETS, ROLLED_UP_BUCKETS) add the entries not folded yet entry by entry, so what they
 * answer before a fold is the books as the entries say them: after the fold they must answer the same,
 * minute by minute and account by account. The entries are the kinds the service writes: the recorder's
 * (acceptance minute, delivered_at at its latency bucket's lower bound, weighted), an erasure's or
 * retention's (acceptance and delivery times as stored, a minute's edge between them), another
 * destination's (rollups only), failures, expiries, and attempts that change no status.
 */
const namespace = new IsolatedNamespace('fold-books');
const FIRST_ACCOUNT = 41;
const SECOND_ACCOUNT = 42;

beforeAll(() => namespace.setUp());
afterAll(() => namespace.tearDown());

async function rows<P extends object, R extends object>(statement: Statement<P, R>, params: P): Promise<R[]> {
  return (await namespace.db.query<R>(statement.text, statement.values(params))).rows;
}

interface Entry {
  account: number;
  created: Date;
  from: string | null;
  to: string | null;
  attempted: 0 | 1;
  delivered: Date | null;
  at: Date;
  tallied: boolean;
  events: number;
}

describe('folding the book entries', () => {
  it('leaves both books answering what the entries said, minute by minute and account by account, with every entry removed', async () => {
    // A whole minute 30 to 29 minutes ago, so every time below is in the past and inside the windows read.
    const minute = Math.floor((Date.now() - 30 * 60_000) / 60_000) * 60_000;
    const at = (ms: number) => new Date(minute + ms);
    /** A latency bucket's lower bound, as the recorder books a group's delivered_at (only bounds LATENCY_BOUNDS_MS has). */
    const bucketFloor = (bound: number) => {
      if (!LATENCY_BOUNDS_MS.includes(bound)) throw new Error(`${bound} ms is no latency bucket's bound`);
      return bound;
    };
    const entries: Entry[] = [
      // The recorder's: three deliveries of one minute in the 20–50 ms bucket, booked as one entry.
      { account: FIRST_ACCOUNT, created: at(0), from: 'queued', to: 'delivered', attempted: 1, delivered: at(bucketFloor(20)), at: at(61_000), tallied: true, events: 3 },
      // Two of the same minute and bucket booked apart (3.0 and 3.5 s: the 2–5 s bucket), changed in one minute.
      { account: FIRST_ACCOUNT, created: at(0), from: 'retrying', to: 'delivered', attempted: 1, delivered: at(3_000), at: at(62_000), tallied: true, events: 1 },
      { account: FIRST_ACCOUNT, created: at(0), from: 'retrying', to: 'delivered', attempted: 1, delivered: at(3_500), at: at(119_000), tallied: true, events: 1 },
      // An erasure's: a delivered event counted out, accepted 10 ms before a minute's end and delivered 20 ms later.
      { account: FIRST_ACCOUNT, created: at(59_990), from: 'delivered', to: null, attempted: 0, delivered: at(60_010), at: at(125_000), tallied: true, events: 1 },
      // A retention's: an event never counted (above the mark) counted in under its first status instead.
      { account: SECOND_ACCOUNT, created: at(30_123), from: 'queued', to: 'filtered', attempted: 0, delivered: null, at: at(125_000), tallied: true, events: 1 },
      // Failures: an attempt that changes nothing, one that ends the delivery, an expiry without a call.
      { account: SECOND_ACCOUNT, created: at(0), from: 'retrying', to: 'retrying', attempted: 1, delivered: null, at: at(70_000), tallied: true, events: 4 },
      { account: SECOND_ACCOUNT, created: at(0), from: 'retrying', to: 'failed', attempted: 1, delivered: null, at: at(130_000), tallied: true, events: 2 },
      { account: SECOND_ACCOUNT, created: at(60_000), from: 'retrying', to: 'expired', attempted: 0, delivered: null, at: at(190_000), tallied: true, events: 1 },
      // Another destination's delivery: in the rollups only.
      { account: SECOND_ACCOUNT, created: at(60_000), from: 'queued', to: 'delivered', attempted: 1, delivered: at(60_000 + bucketFloor(1_000)), at: at(65_000), tallied: false, events: 2 },
    ];
    for (const entry of entries) {
      await namespace.db.query(
        `INSERT INTO book_entries (account_id, created_at, from_status, to_status, attempted, delivered_at, at, tallied, events)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [entry.account, entry.created, entry.from, entry.to, entry.attempted, entry.delivered, entry.at, entry.tallied, entry.events],
      );
    }

    const read = async () => {
      const tallies: unknown[] = [];
      for (const [granularity, spanMs] of [['minute', 60_000], ['hour', 3_600_000]] as const) {
        const first = Math.floor(minute / spanMs) * spanMs;
        for (let start = first; start <= minute + 4 * 60_000; start += spanMs) {
          const buckets = await rows(TALLIED_BUCKETS, { granularity, since: new Date(start), until: new Date(start + spanMs) });
          const counted = buckets
            .map((row) => ({ status: row.status, events: Number(row.events), latency: row.latency_counts?.map(Number) ?? null }))
            .filter((row) => row.events !== 0)
            .sort((a, b) => a.status.localeCompare(b.status));
          if (counted.length > 0) tallies.push({ granularity, start, counted });
        }
      }
      const rollups: { accountId: number; granularity: 'minute' | 'hour'; buckets: (Omit<RollupRow, 'bucket_start'> & { bucket_start: number })[] }[] = [];
      for (const accountId of [ALL_ACCOUNTS, FIRST_ACCOUNT, SECOND_ACCOUNT]) {
        for (const granularity of ['minute', 'hour'] as const) {
          const buckets = await rows(ROLLED_UP_BUCKETS, { granularity, accountId, since: new Date(minute - 3_600_000), until: new Date(minute + 3_600_000) });
          rollups.push({ accountId, granularity, buckets: buckets.map((row) => ({ ...row, bucket_start: new Date(row.bucket_start).getTime(), latency_counts: row.latency_counts.map(Number) })) });
        }
      }
      return { tallies, rollups };
    };

    const before = await read();
    const [{ folded }] = await rows(FOLD_BOOKS, {});
    expect(folded).toBe(entries.length);
    expect((await namespace.db.query(`SELECT count(*)::int AS left FROM book_entries`)).rows).toEqual([{ left: 0 }]);
    expect(await read()).toEqual(before);

    // And what they answer is what the entries say: the minute of acceptance holds five deliveries less the
    // erased one, counted out in that same minute and bucket although its times straddle the minute's end.
    const bucketOf = (bound: number) => LATENCY_BOUNDS_MS.indexOf(bound) + 1;
    const latency = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
    latency[bucketOf(20)] = 3 - 1;
    latency[bucketOf(2_000)] = 2;
    expect(before.tallies).toContainEqual({
      granularity: 'minute',
      start: minute,
      counted: [
        { status: 'delivered', events: 4, latency },
        { status: 'failed', events: 2, latency: null },
        { status: 'filtered', events: 1, latency: null },
        { status: 'queued', events: -4, latency: null },
        { status: 'retrying', events: -4, latency: null },
      ],
    });
    const everyAccount = before.rollups.find((rollup) => rollup.accountId === ALL_ACCOUNTS && rollup.granularity === 'hour')?.buckets ?? [];
    const sum = (key: 'delivered' | 'failed' | 'attempts' | 'failed_attempts') => everyAccount.reduce((total, bucket) => total + Number(bucket[key]), 0);
    expect([sum('delivered'), sum('failed'), sum('attempts'), sum('failed_attempts')]).toEqual([3 + 1 + 1 + 2, 2 + 1, 3 + 1 + 1 + 4 + 2 + 2, 4 + 2]);
  });
});
