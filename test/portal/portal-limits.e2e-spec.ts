import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, createAccount } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { adminPortalLink, openPortalSession, portalCall, portalToken } from '../support/portal-client';
import { waitFor } from '@app/testing';

/**
 * CONTRACT §10's limits on the portal, and the token rotation that ends portal access: per account 10 test
 * events a minute (portal and Open API together) and 5 bulk redeliveries, one at a time; per session 120
 * calls a minute. Each window is a minute long and opens with its first call, so a test uses its own
 * account or session and never waits one out.
 */
let configApi: RunningApp;
let dataSource: DataSource;

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  dataSource = configApi.app.get(DataSource);
});

afterAll(async () => {
  await configApi?.close();
});

const bearer = (token: string): string => `Bearer ${token}`;

async function portalAnswer(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const response = await fetch(`${configApi.url}/portal/v1/${path}`, {
    method,
    headers: { authorization: bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

describe('rotate-token', () => {
  it("ends every portal session and unused link code of the account at once, and nobody else's", async () => {
    const [account, bystander] = [await createAccount(configApi), await createAccount(configApi)];
    const [first, second] = [await portalToken(configApi, account.id), await portalToken(configApi, account.id)];
    const unused = await adminPortalLink(configApi, account.id);
    const otherToken = await portalToken(configApi, bystander.id);

    const rotated = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/rotate-token`, { method: 'POST', headers: ADMIN_HEADERS });
    expect(rotated.status).toBe(200);

    for (const token of [first, second]) expect((await portalCall(configApi, bearer(token), 'GET', 'settings')).status).toBe(401);
    expect((await openPortalSession(configApi, unused.code)).status).toBe(401);
    expect((await portalCall(configApi, bearer(otherToken), 'GET', 'settings')).status).toBe(200);
    // A link made after the rotation works.
    expect((await portalCall(configApi, bearer(await portalToken(configApi, account.id)), 'GET', 'settings')).status).toBe(200);
  });

  it('ends a link and a session opened while the rotation runs, whatever the order of their commits', async () => {
    const account = await createAccount(configApi);
    const before = await adminPortalLink(configApi, account.id);
    // Hold the account row, so the rotation has started (its statement is waiting on the row) but not committed.
    const holder = dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    let released = false;
    try {
      // NO KEY UPDATE, the lock the rotation's UPDATE takes (a plain FOR UPDATE would also stop inserts referencing the account).
      await holder.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [account.id]);
      const waitingOnAccounts = async (): Promise<number> => {
        const [{ count }] = await dataSource.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        return count;
      };
      const rotating = fetch(`${configApi.url}/admin/v1/accounts/${account.id}/rotate-token`, { method: 'POST', headers: ADMIN_HEADERS });
      await waitFor('the rotation waiting on the account row', async () => (await waitingOnAccounts()) >= 1);

      // Opened during the rotation: a link, and a session from a link made before it.
      const during = await adminPortalLink(configApi, account.id);
      const sessionDuring = openPortalSession(configApi, before.code);
      // Either the session opens now (nothing stops it) or it waits on the account row behind the rotation.
      await Promise.race([sessionDuring, waitFor('the session waiting on the account row', async () => (await waitingOnAccounts()) >= 2)]);
      await holder.commitTransaction();
      released = true;

      expect((await rotating).status).toBe(200);
      const opened = await sessionDuring;
      if (opened.status === 201) expect((await portalCall(configApi, bearer(opened.body.token as string), 'GET', 'settings')).status).toBe(401);
      else expect(opened.status).toBe(401);
      expect((await openPortalSession(configApi, during.code)).status).toBe(401);
      // Access opened after the rotation committed works.
      expect((await portalCall(configApi, bearer(await portalToken(configApi, account.id)), 'GET', 'settings')).status).toBe(200);
    } finally {
      if (!released) await holder.rollbackTransaction();
      await holder.release();
    }
  });
});

describe('portal sessions per account', () => {
  it('keeps at most 10 live: opening an 11th ends the oldest (401 after), the other ten live on', async () => {
    const account = await createAccount(configApi);
    const tokens: string[] = [];
    for (let opened = 0; opened < 11; opened += 1) tokens.push(await portalToken(configApi, account.id));
    expect((await portalCall(configApi, bearer(tokens[0]), 'GET', 'settings')).status).toBe(401);
    for (const token of tokens.slice(1)) expect((await portalCall(configApi, bearer(token), 'GET', 'settings')).status).toBe(200);
    const [{ count }] = await dataSource.query<{ count: number }[]>('SELECT count(*)::int AS count FROM portal_sessions WHERE account_id = $1', [account.id]);
    expect(count).toBe(10);
    // A 12th ends the second, and another account's sessions are not touched.
    const bystander = await portalToken(configApi, (await createAccount(configApi)).id);
    tokens.push(await portalToken(configApi, account.id));
    expect((await portalCall(configApi, bearer(tokens[1]), 'GET', 'settings')).status).toBe(401);
    expect((await portalCall(configApi, bearer(tokens[2]), 'GET', 'settings')).status).toBe(200);
    expect((await portalCall(configApi, bearer(bystander), 'GET', 'settings')).status).toBe(200);
  });

  it('keeps at most 10 when many open at once', async () => {
    const account = await createAccount(configApi);
    const links = await Promise.all(Array.from({ length: 14 }, () => adminPortalLink(configApi, account.id)));
    const sessions = await Promise.all(links.map((link) => openPortalSession(configApi, link.code)));
    expect(sessions.map((session) => session.status)).toEqual(Array.from({ length: 14 }, () => 201));
    const live = await Promise.all(sessions.map(async (session) => (await portalCall(configApi, bearer(session.body.token as string), 'GET', 'settings')).status));
    expect(live.filter((status) => status === 200)).toHaveLength(10);
  });
});

describe('test events', () => {
  it('allow 10 a minute per account, the portal and the Open API together, then 429 with Retry-After in each format', async () => {
    const account = await createAccount(configApi);
    const token = await portalToken(configApi, account.id);
    for (let sent = 0; sent < 5; sent += 1) {
      expect((await portalAnswer(token, 'POST', 'test-event', { action: 'Customer_create' })).status).toBe(202);
      expect((await openApiCall(configApi.url, account, 'POST', 'send_test_event', { body: { action: 'Customer_create' } })).status).toBe(200);
    }

    const portal = await portalAnswer(token, 'POST', 'test-event', { action: 'Customer_create' });
    expect({ status: portal.status, error: portal.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
    expect(Number(portal.retryAfter)).toBeGreaterThan(0);
    const openApi = await openApiCall(configApi.url, account, 'POST', 'send_test_event', { body: { action: 'Customer_create' } });
    expect([openApi.status, openApi.body.code]).toEqual([429, 2000]);
    expect(openApi.body.exception?.message).toMatch(/more than 10 test events a minute/);

    const [{ count }] = await dataSource.query<{ count: number }[]>('SELECT count(*)::int AS count FROM events WHERE account_id = $1 AND test', [account.id]);
    expect(count).toBe(10);
    // Another account has its own budget.
    const other = await createAccount(configApi);
    expect((await openApiCall(configApi.url, other, 'POST', 'send_test_event', { body: { action: 'Customer_create' } })).status).toBe(200);
  });
});

describe('bulk redeliveries', () => {
  it('answer 409 while one of the account runs (not counted), and allow 5 a minute', async () => {
    const account = await createAccount(configApi);
    const token = await portalToken(configApi, account.id);
    // A task some other live process is running: its heartbeat is fresh, so no runner here takes it.
    const [running] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO redelivery_tasks (status, account_id, filter, total, upper_seq, lease_owner, heartbeat_at)
       VALUES ('running', $1, '{}'::jsonb, 1, 0, 'another-process', now()) RETURNING id`,
      [account.id],
    );
    for (let asked = 0; asked < 3; asked += 1) {
      const conflict = await portalAnswer(token, 'POST', 'redeliver', { status: 'failed' });
      expect({ status: conflict.status, error: conflict.body.error }).toEqual({ status: 409, error: 'conflict' });
    }
    await dataSource.query("UPDATE redelivery_tasks SET status = 'done', finished_at = now() WHERE id = $1", [running.id]);

    // Nothing matches, so each task is done at once and the next one is not a conflict.
    for (let asked = 0; asked < 5; asked += 1) expect((await portalAnswer(token, 'POST', 'redeliver', { status: 'failed' })).status).toBe(202);
    const limited = await portalAnswer(token, 'POST', 'redeliver', { status: 'failed' });
    expect({ status: limited.status, error: limited.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
  });
});

describe('portal calls', () => {
  it('allow 120 a minute per session, then 429 with Retry-After, other sessions unaffected', async () => {
    const account = await createAccount(configApi);
    const [token, other] = [await portalToken(configApi, account.id), await portalToken(configApi, account.id)];
    for (let call = 0; call < 120; call += 1) expect((await portalAnswer(token, 'GET', 'settings')).status).toBe(200);
    const limited = await portalAnswer(token, 'GET', 'settings');
    expect({ status: limited.status, error: limited.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect((await portalAnswer(other, 'GET', 'settings')).status).toBe(200);
  });

  it('allow 600 a minute per account, its sessions together, so new sessions do not multiply the budget', async () => {
    const account = await createAccount(configApi);
    const tokens = await Promise.all(Array.from({ length: 6 }, () => portalToken(configApi, account.id)));
    // Five sessions spend their 120 each (in parallel batches: the minute must not run out first).
    for (const token of tokens.slice(0, 5)) {
      for (let batch = 0; batch < 6; batch += 1) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => portalAnswer(token, 'GET', 'settings')));
        expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 20 }, () => 200));
      }
    }
    const limited = await portalAnswer(tokens[5], 'GET', 'settings');
    expect({ status: limited.status, error: limited.body.error }).toEqual({ status: 429, error: 'too_many_requests' });
    expect(limited.body.message).toMatch(/more than 600 portal calls a minute for this account/);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    const other = await portalToken(configApi, (await createAccount(configApi)).id);
    expect((await portalAnswer(other, 'GET', 'settings')).status).toBe(200);
  });
});
