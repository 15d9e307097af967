import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS } from '../support/fixtures';
import { freePort } from '@app/testing';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { SsoBrowser } from '../support/sso-browser';

const CLIENT_ID = 'callbacks-console';
const CLIENT_SECRET = 'console-client-secret-0123456789abcdef';

describe('console single sign-on with a real OIDC provider (CONTRACT §15)', () => {
  let provider: TestOidcProvider;
  let api: RunningApp;
  let publicUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${publicUrl}/admin/callback`] });
    api = await startApp(
      ConfigApiModule,
      { PUBLIC_URL: publicUrl, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET },
      { port },
    );
  });
  afterAll(async () => {
    await api?.close();
    await provider?.close();
  });

  /** Signs `sub` in at the provider and stops at the redirect back to config-api's callback. */
  async function toCallback(browser: SsoBrowser, sub: string, claims: Record<string, unknown>): Promise<URL> {
    await provider.nextUser(sub, claims);
    const login = await browser.get(`${publicUrl}/admin/login`);
    expect(login.status).toBe(302);
    const authorize = new URL(login.headers.get('location')!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    const { stoppedAt } = await browser.follow(authorize.href, (next) => next.pathname === '/admin/callback');
    expect(stoppedAt?.searchParams.get('code')).toBeTruthy();
    return stoppedAt!;
  }

  async function signIn(sub: string, claims: Record<string, unknown>): Promise<{ browser: SsoBrowser; callback: Response }> {
    const browser = new SsoBrowser(publicUrl);
    const callback = await browser.get((await toCallback(browser, sub, claims)).href);
    return { browser, callback };
  }

  async function session(browser: SsoBrowser, method = 'GET', path = '/admin/v1/session', headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await browser.get(`${publicUrl}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  async function auditOf(action: string, actor: string): Promise<Record<string, unknown>[]> {
    const response = await fetch(`${api.url}/admin/v1/audit?action=${action}&actor=${encodeURIComponent(actor)}`, { headers: ADMIN_HEADERS });
    return ((await response.json()) as { items: Record<string, unknown>[] }).items;
  }

  it('signs an admin in: an HttpOnly SameSite=Lax cookie of at most 8 hours, the session, CSRF-guarded writes, an audit entry', async () => {
    const { browser, callback } = await signIn('alice', { email: 'alice@example.com', roles: ['viewer', 'admin'] });
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe(`${publicUrl}/admin`);
    const cookie = browser.setCookies.find((line) => line.startsWith('admin_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeLessThanOrEqual(8 * 3600);

    const me = await session(browser);
    expect(me).toEqual({ status: 200, body: { actor: 'alice@example.com', role: 'admin', via: 'oidc', csrf_token: expect.any(String) as unknown } });
    const email = `sso-${Date.now()}@example.com`;
    const withoutCsrf = await session(browser, 'POST', '/admin/v1/accounts', {}, { email });
    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body.message).toMatch(/x-csrf-token/);
    const withCsrf = await session(browser, 'POST', '/admin/v1/accounts', { 'x-csrf-token': me.body.csrf_token as string }, { email });
    expect(withCsrf.status).toBe(201);

    const [signin] = await auditOf('signin', 'alice@example.com');
    expect(signin).toMatchObject({ actor: 'alice@example.com', role: 'admin', via: 'oidc', status: 303 });
    const [created] = await auditOf('account.create', 'alice@example.com');
    expect(created).toMatchObject({ via: 'oidc', role: 'admin', status: 201, account_id: withCsrf.body.id });
  });

  it('takes the highest role of a string claim: an operator reads and redelivers but may not create accounts', async () => {
    const { browser } = await signIn('olga', { email: 'olga@example.com', roles: 'operator' });
    const me = await session(browser);
    expect(me.body).toMatchObject({ actor: 'olga@example.com', role: 'operator' });
    const csrf = { 'x-csrf-token': me.body.csrf_token as string };
    expect((await session(browser, 'GET', '/admin/v1/accounts')).status).toBe(200);
    const refused = await session(browser, 'POST', '/admin/v1/accounts', csrf, { email: `olga-${Date.now()}@example.com` });
    expect(refused).toEqual({ status: 403, body: { error: 'forbidden', message: expect.stringMatching(/role operator .*needs the role admin/) as unknown } });
  });

  it('refuses a user with no role with a 403 page naming the claim, and records it', async () => {
    const { browser, callback } = await signIn('nobody', { email: 'nobody@example.com', roles: ['accountant'] });
    expect(callback.status).toBe(403);
    expect(await callback.text()).toContain('&quot;roles&quot; claim');
    expect(browser.cookie(publicUrl, 'admin_session')).toBeUndefined();
    expect((await session(browser)).status).toBe(401);
    const [refused] = await auditOf('signin.refused', 'nobody@example.com');
    expect(refused).toMatchObject({ role: null, via: 'oidc', status: 403 });
  });

  it('refuses a callback whose state was tampered with, and the code cannot be used after', async () => {
    const browser = new SsoBrowser(publicUrl);
    const callback = await toCallback(browser, 'mallory', { email: 'mallory@example.com', roles: 'admin' });
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const answer = await browser.get(tampered.href);
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain('(state)');
    expect(browser.cookie(publicUrl, 'admin_session')).toBeUndefined();
    // The sign-in is spent: the genuine callback after it does not sign in either.
    expect((await browser.get(callback.href)).status).toBe(400);
    expect((await auditOf('signin.refused', 'unknown')).length).toBeGreaterThanOrEqual(2);
  });

  it('signs out: the cookie is cleared, the session ends on the server, and the sign-out is recorded', async () => {
    const { browser } = await signIn('sam', { email: 'sam@example.com', roles: 'viewer' });
    const token = browser.cookie(publicUrl, 'admin_session')!;
    expect((await session(browser)).status).toBe(200);
    const out = await browser.get(`${publicUrl}/admin/logout`, { method: 'POST' });
    expect(out.status).toBe(204);
    expect(browser.setCookies.at(-1)).toMatch(/^admin_session=.*Max-Age=0/);
    // The old cookie, replayed, is refused: the session is gone from the server, not only from the browser.
    const replay = await fetch(`${publicUrl}/admin/v1/session`, { headers: { cookie: `admin_session=${token}` } });
    expect(replay.status).toBe(401);
    const [signout] = await auditOf('signout', 'sam@example.com');
    expect(signout).toMatchObject({ role: 'viewer', via: 'oidc', status: 204 });
    expect(await (await fetch(`${publicUrl}/admin/sign-in-options`)).json()).toEqual({ sso: true });
  });
});
