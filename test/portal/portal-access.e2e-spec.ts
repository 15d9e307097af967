import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, createAccount } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { adminPortalLink, openPortalSession, portalCall } from '../support/portal-client';
import { waitFor } from '@app/testing';

/** Portal links and sessions (CONTRACT §10): one-time codes in the fragment, traded for a session. */
const PUBLIC_URL = 'https://callbacks.example.test/base';

let configApi: RunningApp;

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule, { PUBLIC_URL });
});

afterAll(async () => {
  await configApi?.close();
});

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

describe('portal links', () => {
  it('makes a one-time link on PUBLIC_URL whose code opens one session for its account', async () => {
    const account = await createAccount(configApi);
    const before = Date.now();
    const link = await adminPortalLink(configApi, account.id, '2h');
    expect(link.url).toMatch(new RegExp(`^${PUBLIC_URL}/portal#[A-Za-z0-9_-]{43}$`));
    const expiresIn = Date.parse(link.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(2 * 3600_000 - 60_000);
    expect(expiresIn).toBeLessThanOrEqual(2 * 3600_000 + 60_000);

    const session = await openPortalSession(configApi, link.code);
    expect(session.status).toBe(201);
    expect(session.body).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), account_id: account.id, expires_at: expect.any(String) });
    const settings = await portalCall(configApi, `Bearer ${session.body.token as string}`, 'GET', 'settings');
    expect(settings.status).toBe(200);

    const again = await openPortalSession(configApi, link.code);
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'unauthorized', message: 'this portal link is used, expired or unknown; ask for a new one' });
  });

  it('refuses unknown, malformed and expired codes alike with 401', async () => {
    const account = await createAccount(configApi);
    const short = await adminPortalLink(configApi, account.id, '1s');
    // Expired by the clock the service checks against (this machine's), not after a sleep of the ttl's length;
    // opening it to see would use it.
    await waitFor('the short link’s expiry', () => Date.now() > Date.parse(short.expires_at) + 1);
    const answers = await Promise.all(
      [short.code, 'A'.repeat(43), 'not-a-code', ''].map((code) => openPortalSession(configApi, code)),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body.message).toBe('this portal link is used, expired or unknown; ask for a new one');
    }
  });

  it('gives one session when two tabs race with the same code', async () => {
    const account = await createAccount(configApi);
    const { code } = await adminPortalLink(configApi, account.id);
    const answers = await Promise.all(Array.from({ length: 5 }, () => openPortalSession(configApi, code)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 401, 401, 401, 401]);
  });

  it('refuses a ttl over 24h or not a duration, naming ttl, and an unknown account with 404', async () => {
    const account = await createAccount(configApi);
    for (const ttl of ['25h', '0s', 'soon', 15]) {
      const response = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/portal-link`, { method: 'POST', headers: ADMIN_HEADERS, body: JSON.stringify({ ttl }) });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'ttl', problem: expect.stringContaining('ttl must be a duration') }] });
    }
    const missing = await fetch(`${configApi.url}/admin/v1/accounts/2147483000/portal-link`, { method: 'POST', headers: ADMIN_HEADERS, body: '{}' });
    expect(missing.status).toBe(404);
    const unauthorized = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}/portal-link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthorized.status).toBe(401);
  });

  it('makes a link through the signed Open API too', async () => {
    const account = await createAccount(configApi);
    const answer = await openApiCall<{ url: string; expires_at: string }>(configApi.url, account, 'POST', 'portal_link');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ code: 1000, message: 'OK', url: expect.stringMatching(new RegExp(`^${PUBLIC_URL}/portal#`)), expires_at: expect.any(String) });
    const expiresIn = Date.parse(answer.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(14 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000 + 5_000);
    const session = await openPortalSession(configApi, new URL(answer.body.url).hash.slice(1));
    expect(session.body.account_id).toBe(account.id);
  });

  it('stores only digests of codes and tokens', async () => {
    const account = await createAccount(configApi);
    const { code } = await adminPortalLink(configApi, account.id);
    const session = await openPortalSession(configApi, code);
    const token = session.body.token as string;
    const dataSource = configApi.app.get(DataSource);
    const codes = await dataSource.query<{ code_digest: Buffer }[]>('SELECT code_digest FROM portal_link_codes WHERE account_id = $1', [account.id]);
    const sessions = await dataSource.query<{ token_digest: Buffer }[]>('SELECT token_digest FROM portal_sessions WHERE account_id = $1', [account.id]);
    expect(codes.map((row) => row.code_digest.equals(digest(code)))).toEqual([true]);
    expect(sessions.map((row) => row.token_digest.equals(digest(token)))).toEqual([true]);
    const dump = JSON.stringify(await dataSource.query('SELECT * FROM portal_link_codes, portal_sessions WHERE portal_sessions.account_id = $1', [account.id]));
    expect(dump).not.toContain(code);
    expect(dump).not.toContain(token);

    // The used code goes when the account gets its next link; the live session stays.
    const next = await adminPortalLink(configApi, account.id);
    const left = await dataSource.query<{ code_digest: Buffer }[]>('SELECT code_digest FROM portal_link_codes WHERE account_id = $1', [account.id]);
    expect(left.map((row) => row.code_digest.equals(digest(next.code)))).toEqual([true]);
    const stillThere = await dataSource.query<unknown[]>('SELECT 1 FROM portal_sessions WHERE account_id = $1', [account.id]);
    expect(stillThere).toHaveLength(1);
  });
});
