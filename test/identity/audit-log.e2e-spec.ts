import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { expectQueryError } from '../support/admin-client';
import { ADMIN_HEADERS, createAccount } from '../support/fixtures';
import { signedOpenApiCall } from '../support/open-api-client';
import { portalCall, portalToken } from '../support/portal-client';

const OPERATOR = 'audit-operator-token-'.padEnd(40, 'o');
const ADMIN = 'audit-admin-token-'.padEnd(40, 'a');

type Entry = Record<string, unknown>;

async function call(app: RunningApp, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'ignored' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function audit(app: RunningApp, query: string): Promise<{ items: Entry[]; next_cursor: string | null }> {
  const answer = await call(app, ADMIN, 'GET', `/admin/v1/audit?${query}`);
  expect(answer.status).toBe(200);
  return answer.body as unknown as { items: Entry[]; next_cursor: string | null };
}

describe('audit log (CONTRACT §15)', () => {
  let api: RunningApp;
  beforeAll(async () => {
    api = await startApp(ConfigApiModule, { ADMIN_TOKENS: `audit-otto:operator:${OPERATOR},audit-root:admin:${ADMIN}` });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('records admin writes with who, how, the account, the target and the status, and never a secret or a body', async () => {
    const email = `audited-${Date.now()}@example.com`;
    const created = await call(api, ADMIN, 'POST', '/admin/v1/accounts', { email, name: 'Audited Inc' });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const rotated = await call(api, ADMIN, 'POST', `/admin/v1/accounts/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const refused = await call(api, OPERATOR, 'POST', `/admin/v1/accounts/${id}/rotate-token`);
    expect(refused.status).toBe(403);
    const invalid = await call(api, ADMIN, 'PUT', `/admin/v1/accounts/${id}/redaction`, { fields: 'not-a-list' });
    expect(invalid.status).toBe(422);

    const { items } = await audit(api, `account_id=${id}`);
    expect(items.map((entry) => [entry.action, entry.actor, entry.role, entry.via, entry.status])).toEqual([
      ['redaction.update', 'audit-root', 'admin', 'token', 422],
      ['token.rotate', 'audit-otto', 'operator', 'token', 403],
      ['secret.rotate', 'audit-root', 'admin', 'token', 200],
      ['account.create', 'audit-root', 'admin', 'token', 201],
    ]);
    for (const entry of items) {
      expect(entry).toEqual({
        id: expect.stringMatching(/^\d+$/) as unknown,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
        actor: entry.actor,
        role: entry.role,
        via: 'token',
        action: entry.action,
        account_id: id,
        target: null,
        status: entry.status,
        ip: expect.stringMatching(/127\.0\.0\.1/) as unknown,
        request_id: expect.any(String) as unknown,
      });
    }
    const stored = JSON.stringify(items);
    for (const secret of [created.body.signing_secret, created.body.open_api_token, rotated.body.signing_secret, ADMIN, OPERATOR, email, 'Audited Inc']) {
      expect(stored).not.toContain(secret as string);
    }
  });

  it('records Open API and portal writes of an API user as account:<id>, and filters by actor and action', async () => {
    const account = await createAccount(api);
    const answer = await signedOpenApiCall(api, account, 'set_push_content_type', { push_content_type: 'json' });
    expect(answer.body.code).toBe(1000);
    const token = await portalToken(api, account.id);
    expect((await portalCall(api, `Bearer ${token}`, 'POST', 'rotate-secret')).status).toBe(200);

    const mine = await audit(api, `actor=${encodeURIComponent(`account:${account.id}`)}`);
    expect(mine.items.map((entry) => [entry.action, entry.via, entry.role, entry.account_id, entry.status])).toEqual([
      ['secret.rotate', 'portal', null, account.id, 200],
      ['portal.session.open', 'portal', null, account.id, 201],
      ['set_push_content_type', 'open_api', null, account.id, 200],
    ]);
    const links = await audit(api, `action=portal_link.create&account_id=${account.id}`);
    expect(links.items.map((entry) => entry.actor)).toEqual(['ADMIN_TOKEN']);
    expect(JSON.stringify(mine.items)).not.toContain(token);
  });

  it('pages newest first with an opaque cursor, and names a bad parameter with 400', async () => {
    const account = await createAccount(api);
    for (let round = 0; round < 5; round += 1) expect((await call(api, OPERATOR, 'POST', `/admin/v1/accounts/${account.id}/endpoint/enable`)).status).toBe(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Entry[]; next_cursor: string | null } = await audit(api, `account_id=${account.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.items.map((entry) => entry.id as string));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(6);
    expect([...seen].sort((a, b) => Number(b) - Number(a))).toEqual(seen);

    for (const [query, field] of [
      ['since=yesterday', 'since'],
      ['until=2026-13-01', 'until'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['account_id=abc', 'account_id'],
      ['action=DROP%20TABLE', 'action'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ]) {
      await expectQueryError(api, 'GET', `/admin/v1/audit?${query}`, field);
    }
    expect((await call(api, OPERATOR, 'GET', '/admin/v1/audit')).status).toBe(403);
  });

  it('is append-only: UPDATE, DELETE and TRUNCATE as the app\'s database user are refused', async () => {
    await createAccount(api);
    const dataSource = api.app.get(DataSource);
    const [{ count }] = await dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM audit_log`);
    expect(count).toBeGreaterThan(0);
    await expect(dataSource.query(`UPDATE audit_log SET actor = 'someone-else'`)).rejects.toThrow(/audit_log is append-only: UPDATE is refused/);
    await expect(dataSource.query(`DELETE FROM audit_log`)).rejects.toThrow(/audit_log is append-only: DELETE is refused/);
    await expect(dataSource.query(`TRUNCATE audit_log`)).rejects.toThrow(/audit_log is append-only: TRUNCATE is refused/);
    // Through a partition too: the trigger is on each of them.
    const [{ partition }] = await dataSource.query<{ partition: string }[]>(`SELECT tableoid::regclass::text AS partition FROM audit_log LIMIT 1`);
    await expect(dataSource.query(`DELETE FROM ${partition}`)).rejects.toThrow(/append-only/);
    const [{ after }] = await dataSource.query<{ after: number }[]>(`SELECT count(*)::int AS after FROM audit_log WHERE actor = 'someone-else'`);
    expect(after).toBe(0);
    expect(ADMIN_HEADERS.authorization).toMatch(/^Bearer /);
  });
});
