import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from './support/apps';
import { ADMIN_HEADERS, createAccount } from './support/fixtures';
import { openApiCall } from './support/open-api-client';
import { adminPortalLink, openPortalSession, portalCall, portalToken } from './support/portal-client';

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
});
