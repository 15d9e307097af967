import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { PERMISSION_KEYS } from '@app/payloads';
import { openApiSign } from '@app/signing';
import { STORE_EVENTS, storeEventsParams } from '@app/persistence/testing';
import { percentiles, startConfigApiProcess, stopProcess, timedGet as timedGetFrom } from './support/config-api-process';

/**
 * `npm run bench:portal -- --database URL`: the account portal's calls and the pull feed on a database
 * filled by `npm run seed` (10,000,000 events in the issue), through the real config-api (built, on
 * loopback): each request `--runs` times over HTTP after a warm-up, for one seeded account. Reports the
 * median, p95 and max round trip in ms (the server's handling plus a loopback hop). Changes only that
 * account's permissions (all on, so the feed serves every action) and adds a portal session.
 */
const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    port: { type: 'string', default: '3978' },
    runs: { type: 'string', default: '60' },
  },
});
if (!values.database) throw new Error('--database is required');
const databaseUrl = values.database;
const TOKEN = 'bench-admin-token-0123456789';
const base = `http://127.0.0.1:${values.port}`;
const runs = Number(values.runs);

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function startConfigApi(): Promise<ChildProcess> {
  return startConfigApiProcess(
    [resolve(__dirname, '..', 'apps', 'config-api', 'src', 'main.js')],
    { DATABASE_URL: databaseUrl, CONFIG_API_PORT: values.port ?? '3978', ADMIN_TOKEN: TOKEN, REDIS_PREFIX: 'bench-portal', OPEN_API_RATE_LIMIT: '1000000', LOG_LEVEL: 'error' },
    base,
  );
}

function timedGet(path: string, authorization?: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  return timedGetFrom(base, path, authorization);
}

function summary(samples: number[]): string {
  const { median, p95, max } = percentiles(samples);
  return `${median.toFixed(1).padStart(7)} ${p95.toFixed(1).padStart(7)} ${max.toFixed(1).padStart(7)}`;
}

/** Runs `request(i)` `runs` times after two discarded warm-ups and prints its median, p95 and max. */
async function measure(name: string, request: (run: number) => Promise<{ ms: number }>): Promise<void> {
  for (let warm = 0; warm < 2; warm += 1) await request(warm);
  const samples: number[] = [];
  for (let run = 0; run < runs; run += 1) samples.push((await request(run)).ms);
  say(`${name.padEnd(52)} ${summary(samples)}`);
}

/**
 * What the feed's index costs ingest: ingest's own statement (STORE_EVENTS, a 500-event batch) in a
 * rolled-back transaction, alternately with events_feed_idx and with it dropped inside the transaction,
 * so both see the same table and the same load.
 */
async function feedIndexCost(db: Client, accountId: number): Promise<void> {
  const batch = 500;
  const withIndex: number[] = [];
  const without: number[] = [];
  // WAL bytes written by the statement: the index's work, unlike time, is not blurred by the machine's load.
  const walWith: number[] = [];
  const walWithout: number[] = [];
  for (let round = 0; round < 2 + 2 * Math.ceil(runs / 4); round += 1) {
    const dropped = round % 2 === 1;
    const ids = Array.from({ length: batch }, () => `bench-feed-${randomUUID()}`);
    await db.query('BEGIN');
    try {
      if (dropped) await db.query('DROP INDEX events_feed_idx');
      const [{ lsn }] = (await db.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows;
      const started = performance.now();
      const stored = storeEventsParams(
        ids.map((eventId, index) => ({ eventId, accountId, action: 'Customer_destroy', messageText: JSON.stringify({ id: index }), permissionKey: 'customer_destroy', test: false, takers: [] })),
      );
      await db.query(STORE_EVENTS.text, STORE_EVENTS.values(stored));
      const ms = performance.now() - started;
      const [{ bytes }] = (await db.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS bytes', [lsn])).rows;
      if (round >= 2) {
        (dropped ? without : withIndex).push(ms);
        (dropped ? walWithout : walWith).push(Number(bytes));
      }
    } finally {
      await db.query('ROLLBACK');
    }
  }
  const a = percentiles(withIndex);
  const b = percentiles(without);
  const wa = percentiles(walWith).median;
  const wb = percentiles(walWithout).median;
  say(`ingest statement, ${batch} events, median: with events_feed_idx ${a.median.toFixed(1)} ms and ${(wa / 1024).toFixed(0)} KiB WAL; without ${b.median.toFixed(1)} ms and ${(wb / 1024).toFixed(0)} KiB WAL (WAL +${(((wa - wb) / wb) * 100).toFixed(0)} %)`);
}

async function main(): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const [{ count }] = (await db.query<{ count: string }>('SELECT count(*)::text AS count FROM events')).rows;
  const [account] = (await db.query<{ id: number; email: string; open_api_token: string }>(
    'SELECT id, email, open_api_token FROM accounts WHERE EXISTS (SELECT 1 FROM events WHERE account_id = accounts.id) ORDER BY id LIMIT 1',
  )).rows;
  const [{ own }] = (await db.query<{ own: string }>('SELECT count(*)::text AS own FROM events WHERE account_id = $1', [account.id])).rows;
  await db.query('UPDATE callback_settings SET permissions = $2::jsonb WHERE account_id = $1', [
    account.id,
    JSON.stringify(Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true]))),
  ]);
  // Events and feed positions spread over the whole log (a block sample, not the newest few).
  const sample = (await db.query<{ event_id: string; cursor: string }>(
    `SELECT event_id, COALESCE(txid, '0'::xid8)::text || '.' || seq AS cursor FROM events TABLESAMPLE SYSTEM (0.5)
      WHERE account_id = $1 LIMIT 400`,
    [account.id],
  )).rows;
  await feedIndexCost(db, account.id);
  await db.end();
  say(`${Number(count).toLocaleString('en-US')} events; account ${account.id} has ${Number(own).toLocaleString('en-US')}; ${sample.length} sampled events`);

  const configApi = await startConfigApi();
  try {
    const link = await fetch(`${base}/admin/v1/accounts/${account.id}/portal-link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const code = new URL(((await link.json()) as { url: string }).url).hash.slice(1);
    const session = await fetch(`${base}/portal/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    const portal = `Bearer ${((await session.json()) as { token: string }).token}`;
    const signed = (): string => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const nonce = randomUUID();
      const sign = openApiSign({ email: account.email, openApiToken: account.open_api_token, timestamp, nonce });
      return new URLSearchParams({ email: account.email, timestamp, nonce, sign_version: 'v2', sign }).toString();
    };
    const pick = (run: number): (typeof sample)[number] => sample[(run * 7919) % sample.length];

    say(`${'request (HTTP round trip, ms)'.padEnd(52)}  median     p95     max`);
    await measure('portal: GET /portal/v1/events (first page, 50)', () => timedGet('/portal/v1/events?limit=50', portal));
    await measure('portal: GET /portal/v1/events?status=failed', () => timedGet('/portal/v1/events?limit=50&status=failed', portal));
    await measure('portal: GET /portal/v1/events?action=ShutQueue_create', () => timedGet('/portal/v1/events?limit=50&action=ShutQueue_create', portal));
    const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
    await measure('portal: GET /portal/v1/events?q=<customer id>&since=-3d', () =>
      timedGet(`/portal/v1/events?limit=50&q=12345&since=${encodeURIComponent(since)}`, portal),
    );
    await measure('portal: GET /portal/v1/events/:event_id', (run) => timedGet(`/portal/v1/events/${encodeURIComponent(pick(run).event_id)}`, portal));
    await measure('feed: GET /open_api_v1/events (oldest, 100)', () => timedGet(`/open_api_v1/events?limit=100&${signed()}`));
    await measure('feed: GET /open_api_v1/events?after=<anywhere> (100)', (run) =>
      timedGet(`/open_api_v1/events?limit=100&after=${pick(run).cursor}&${signed()}`),
    );
    await measure('feed: GET /open_api_v1/events?after=<anywhere> (500)', (run) =>
      timedGet(`/open_api_v1/events?limit=500&after=${pick(run).cursor}&${signed()}`),
    );
  } finally {
    await stopProcess(configApi);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
