import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { EVENT_ACTIONS, PERMISSION_KEYS } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { createAccount, INGEST_HEADERS, type TestAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { openApiCall } from '../support/open-api-client';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { freePort, waitFor } from '@app/testing';

/**
 * The pull feed (CONTRACT §10): in accepted order, permission filtered, and never skipping an event
 * whose transaction commits after a later one's. Own database: the race counts every row.
 */
const namespace = new IsolatedNamespace('event-feed');
// Several built ingest processes start and take thousands of events on a shared, busy machine.
jest.setTimeout(240_000);

interface FeedItem {
  event_id: string;
  action: string;
  message: Record<string, unknown>;
  created_at: string;
}
interface FeedBody {
  items: FeedItem[];
  next_cursor: string;
}

let configApi: RunningApp;
let db: Client;

async function feed(account: TestAccount, query: Record<string, string> = {}) {
  return openApiCall<FeedBody>(configApi.url, account, 'GET', 'events', { query });
}

async function allowEverything(account: TestAccount): Promise<void> {
  const answer = await openApiCall(configApi.url, account, 'POST', 'set_permissions', {
    body: { permissions: Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true])) },
  });
  expect(answer.status).toBe(200);
}

function ingestBody(accountId: number, eventId: string, index: number): Record<string, unknown> {
  return { account_id: accountId, action: 'Customer_destroy', message: { ...SAMPLE_MESSAGES.Customer_destroy, id: index }, event_id: eventId };
}

/** Every event id of the account in the feed's order, read straight from the table. */
async function storedOrder(accountId: number): Promise<string[]> {
  const result = await db.query<{ event_id: string }>(
    `SELECT event_id FROM events WHERE account_id = $1 ORDER BY COALESCE(txid, '0'::xid8), seq`,
    [accountId],
  );
  return result.rows.map((row) => row.event_id);
}

beforeAll(async () => {
  await namespace.setUp();
  db = namespace.db;
  configApi = await startApp(ConfigApiModule, { ...namespace.overrides, OPEN_API_RATE_LIMIT: '100000' });
});

afterAll(async () => {
  await configApi?.close();
  await namespace.tearDown();
});

describe('GET /open_api_v1/events', () => {
  it('serves the allowed events of this account only, oldest first, paging with a string cursor', async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    await openApiCall(configApi.url, account, 'POST', 'set_permissions', { body: { permissions: { customer_create: true, customer_update: true } } });
    const empty = await feed(account);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ code: 1000, message: 'OK', items: [], next_cursor: expect.any(String) });

    const label = randomUUID();
    for (const [index, action] of ['Customer_create', 'Customer_destroy', 'Customer_update', 'Customer_create'].entries()) {
      await db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, $3, $4::json)`, [
        `${label}-${index}`,
        account.id,
        action,
        JSON.stringify({ n: index, nested: { b: 1, a: 2 } }),
      ]);
    }
    await db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}')`, [`${label}-other`, other.id]);
    // A test event is in the feed whatever the permissions, as it is pushed whatever the permissions.
    await db.query(`INSERT INTO events (event_id, account_id, action, message, test) VALUES ($1, $2, 'Organization_create', '{}', true)`, [`test_${label}`, account.id]);

    // Write transactions anywhere in the cluster hold the horizon back until they end: wait for it.
    const first = await waitFor('the first page', async () => {
      const answer = await feed(account, { limit: '2', after: empty.body.next_cursor });
      return answer.body.items.length === 2 ? answer : false;
    });
    expect(first.body.items.map((item) => item.event_id)).toEqual([`${label}-0`, `${label}-2`]);
    expect(first.body.items[0]).toEqual({ event_id: `${label}-0`, action: 'Customer_create', message: { n: 0, nested: { b: 1, a: 2 } }, created_at: expect.any(String) });
    expect(Object.keys(first.body.items[0].message.nested as object)).toEqual(['b', 'a']);
    const second = await feed(account, { limit: '2', after: first.body.next_cursor });
    expect(second.body.items.map((item) => item.event_id)).toEqual([`${label}-3`, `test_${label}`]);
    const caughtUp = await feed(account, { after: second.body.next_cursor });
    expect(caughtUp.body).toEqual({ code: 1000, message: 'OK', items: [], next_cursor: second.body.next_cursor });
  });

  it('orders by seq as a number within one transaction (9 before 10), not as text', async () => {
    const account = await createAccount(configApi);
    await allowEverything(account);
    const label = randomUUID();
    await db.query('BEGIN');
    try {
      for (const seq of [10, 9, 100]) {
        await db.query(`INSERT INTO events (seq, event_id, account_id, action, message) VALUES ($1, $2, $3, 'Customer_create', '{}')`, [seq, `${label}-${seq}`, account.id]);
      }
      await db.query('COMMIT');
    } catch (error) {
      await db.query('ROLLBACK');
      throw error;
    }
    const page = await waitFor('the three events', async () => {
      const answer = await feed(account);
      return answer.body.items.length === 3 ? answer : false;
    });
    expect(page.body.items.map((item) => item.event_id)).toEqual([`${label}-9`, `${label}-10`, `${label}-100`]);
  });

  it('refuses a malformed after or limit with code 2000 naming the parameter', async () => {
    const account = await createAccount(configApi);
    for (const [query, named] of [
      [{ after: 'abc' }, 'after'],
      [{ after: '1.2.3' }, 'after'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
      [{ limit: 'x' }, 'limit'],
    ] as const) {
      const answer = await feed(account, query);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(2000);
      expect(answer.body.exception?.message).toMatch(new RegExp(`^${named} `));
    }
  });

  it('holds back an event committed while an earlier one is still being written, then serves both in order', async () => {
    const account = await createAccount(configApi);
    await allowEverything(account);
    const label = randomUUID();
    const writer = new Client({ connectionString: namespace.databaseUrl });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}')`, [`${label}-early`, account.id]);
      await db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}')`, [`${label}-late`, account.id]);
      const whileOpen = await feed(account);
      expect(whileOpen.body.items).toEqual([]);
      await writer.query('COMMIT');
    } finally {
      await writer.end();
    }
    // Write transactions anywhere in the cluster (other databases included) hold the horizon until they end.
    const after = await waitFor('both events in the feed', async () => {
      const answer = await feed(account);
      return answer.body.items.length > 0 ? answer : false;
    }, { timeoutMs: 30_000 });
    expect(after.body.items.map((item) => item.event_id)).toEqual([`${label}-early`, `${label}-late`]);
  });

  it('gives a reader polling during a race of several ingest processes every event exactly once, in cursor order', async () => {
    const account = await createAccount(configApi);
    await allowEverything(account);
    const processes: BuiltAppProcess[] = [];
    try {
      const urls: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const port = await freePort();
        processes.push(spawnBuiltApp('ingest', { ...namespace.overrides, INGEST_PORT: String(port), LISTEN_HOST: '127.0.0.1' }));
        urls.push(`http://127.0.0.1:${port}`);
      }
      for (const process of processes) await process.waitForOutput('listening on http://', 60_000);

      const label = randomUUID();
      const perProcess = 1200;
      const total = 3 * perProcess;
      const seen: string[] = [];
      // Polls while the writers run and until it has as many events as were accepted; a transaction
      // elsewhere in the cluster may hold the horizon back for a moment, so it keeps polling meanwhile.
      const reader = (async () => {
        let cursor: string | undefined;
        const deadline = Date.now() + 180_000;
        while (seen.length < total && Date.now() < deadline) {
          const page = await feed(account, cursor === undefined ? { limit: '500' } : { limit: '500', after: cursor });
          expect(page.status).toBe(200);
          seen.push(...page.body.items.map((item) => item.event_id));
          cursor = page.body.next_cursor;
          if (page.body.items.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return cursor;
      })();

      const writers = urls.map(async (url, process) => {
        // Eight concurrent streams per process, so the group commit and the processes interleave.
        await Promise.all(
          Array.from({ length: 8 }, async (_, stream) => {
            for (let index = stream; index < perProcess; index += 8) {
              const eventId = `${label}-${process}-${index}`;
              const response = await fetch(`${url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(ingestBody(account.id, eventId, index)) });
              if (response.status !== 202) throw new Error(`ingest answered ${response.status}: ${await response.text()}`);
            }
          }),
        );
      });
      await Promise.all(writers);
      const lastCursor = await reader;
      const nothingMore = await feed(account, lastCursor === undefined ? {} : { after: lastCursor });
      expect(nothingMore.body.items).toEqual([]);

      const expected = await storedOrder(account.id);
      expect(expected).toHaveLength(total);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expected);
    } finally {
      await Promise.all(processes.map((process) => process.terminate(10_000)));
    }
  });

  it('moves the cursor past every row a poll looked at, allowed or not: 3,000 filtered events cost one poll', async () => {
    const account = await createAccount(configApi);
    await openApiCall(configApi.url, account, 'POST', 'set_permissions', { body: { permissions: { customer_create: true } } });
    const empty = await feed(account);
    await db.query(
      `INSERT INTO events (event_id, account_id, action, message) SELECT $1 || '-' || n, $2, 'Customer_destroy', '{}' FROM generate_series(1, 3000) n`,
      [randomUUID(), account.id],
    );
    const [last] = (
      await db.query<{ cursor: string }>(
        `SELECT COALESCE(txid, '0'::xid8)::text || '.' || seq AS cursor FROM events WHERE account_id = $1 ORDER BY COALESCE(txid, '0'::xid8) DESC, seq DESC LIMIT 1`,
        [account.id],
      )
    ).rows;

    // Once the rows are visible to the feed, one poll passes all of them with an empty page.
    const passed = await waitFor('a poll past the filtered rows', async () => {
      const answer = await feed(account, { after: empty.body.next_cursor });
      return answer.body.next_cursor !== empty.body.next_cursor ? answer : false;
    });
    expect(passed.body).toEqual({ code: 1000, message: 'OK', items: [], next_cursor: last.cursor });

    // An allowed event after them comes in the next poll, and only the rows after the cursor are looked at.
    await db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, 'Customer_create', '{}')`, [`${randomUUID()}-allowed`, account.id]);
    const next = await waitFor('the allowed event', async () => {
      const answer = await feed(account, { after: passed.body.next_cursor });
      return answer.body.items.length === 1 ? answer : false;
    });
    expect(next.body.items[0].action).toBe('Customer_create');
  });

  it('lists events of every action the permissions allow, whatever the push_url', async () => {
    const account = await createAccount(configApi);
    await allowEverything(account);
    const label = randomUUID();
    for (const action of EVENT_ACTIONS) {
      await db.query(`INSERT INTO events (event_id, account_id, action, message) VALUES ($1, $2, $3, '{}')`, [`${label}-${action}`, account.id, action]);
    }
    const page = await waitFor('the feed to serve all eleven', async () => {
      const answer = await feed(account);
      return answer.body.items.length === EVENT_ACTIONS.length ? answer : false;
    });
    expect(page.body.items.map((item) => item.action)).toEqual([...EVENT_ACTIONS]);
  });
});
