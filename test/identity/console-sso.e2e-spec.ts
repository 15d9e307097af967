import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { launchBrowser, signIntoConsole, type TestBrowser } from '../support/browser';
import { ensureConsoleBuilt } from '../support/console-build';
import { freePort } from '@app/testing';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider';

const CLIENT_ID = 'console-in-chromium';
const CLIENT_SECRET = 'chromium-client-secret-0123456789abcdef';
const VIEWER_TOKEN = 'console-viewer-token-'.padEnd(40, 'v');

describe('the console signs in with SSO in Chromium (CONTRACT §15)', () => {
  let provider: TestOidcProvider;
  let api: RunningApp;
  let browser: TestBrowser;
  let publicUrl: string;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${publicUrl}/admin/callback`] });
    api = await startApp(
      ConfigApiModule,
      { PUBLIC_URL: publicUrl, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, ADMIN_TOKENS: `vic:viewer:${VIEWER_TOKEN}` },
      { port },
    );
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await provider?.close();
  });

  it('offers Sign in with SSO beside the token form, signs an admin in, shows who, the Audit page, and signs out', async () => {
    const { page } = browser;
    await provider.nextUser('carol', { email: 'carol@example.com', roles: ['operator', 'admin'] });
    await page.goto(`${publicUrl}/admin`);
    await page.getByLabel('Admin token').waitFor();
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin');
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('carol@example.com (admin)');
    // The session is a cookie the page's script cannot read.
    expect(await page.evaluate('document.cookie')).not.toContain('admin_session');

    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', exact: true, level: 1 }).waitFor();
    await page.getByLabel('Action').fill('signin');
    await page.getByLabel('Actor').fill('carol@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.locator('tr[data-audit-id]').first();
    await row.waitFor();
    expect(await row.textContent()).toContain('carol@example.com');
    expect(await row.textContent()).toContain('oidc');

    // A write through the cookie carries its CSRF token: creating an account works from the page.
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByLabel('Email', { exact: true }).fill(`sso-console-${Date.now()}@example.com`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText(/Account \d+ created\./).waitFor();
    const posted = browser.requests.filter((request) => request.url.endsWith('/admin/v1/accounts') && request.authorization === undefined);
    expect(posted.length).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    const after = await page.context().request.get(`${publicUrl}/admin/v1/session`);
    expect(after.status()).toBe(401);
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
    expect(browser.problems).toEqual([]);
  });

  it('a viewer signed in with a named token sees no Audit page and no account creation', async () => {
    const { page } = browser;
    await page.context().clearCookies();
    await signIntoConsole(page, publicUrl, VIEWER_TOKEN);
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('vic (viewer)');
    expect(await page.getByRole('link', { name: 'Audit' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true, level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
  });
});
