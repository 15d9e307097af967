import { openApiQuery } from '@app/signing';
import { useSignedInConsole } from '../support/browser';
import { ADMIN_HEADERS, createAccount, type TestAccount } from '../support/fixtures';
import { useOwnRedisPrefix } from '../support/worker-process';

/**
 * The account page's credential buttons in a real Chromium against the real config-api (serving the
 * built console): each asks for confirmation, shows a new credential once, and what it did is what the
 * admin and Open APIs then answer.
 */
useOwnRedisPrefix('console-credentials');
jest.setTimeout(120_000);

const ui = useSignedInConsole();

async function accountView(accountId: number): Promise<Record<string, unknown>> {
  return (await (await fetch(`${ui.configApi.url}/admin/v1/accounts/${accountId}`, { headers: ADMIN_HEADERS })).json()) as Record<string, unknown>;
}

async function openApiStatus(account: TestAccount, openApiToken: string): Promise<number> {
  const query = new URLSearchParams(openApiQuery({ email: account.email, openApiToken }));
  return (await fetch(`${ui.configApi.url}/open_api_v1/push_settings?${query.toString()}`)).status;
}

/** Clicks a credential button, then its confirmation; answers the text of what the page shows once (if anything). */
async function confirmAction(button: string): Promise<void> {
  await ui.page.getByRole('button', { name: button, exact: true }).click();
  await ui.page.getByRole('alertdialog', { name: button }).waitFor();
  await ui.page.getByRole('button', { name: `Confirm: ${button}` }).click();
}

async function revealed(name: string): Promise<string> {
  const status = ui.page.locator('.secrets[role=status]');
  await status.waitFor();
  const row = status.locator('tr', { hasText: name });
  return (await row.locator('.mono').innerText()).trim();
}

describe('account credentials in the console', () => {
  it('rotates the Open API token after a confirmation, shows the new one once, and the old one is refused', async () => {
    const account = await createAccount(ui.configApi);
    await ui.page.goto(`${ui.configApi.url}/admin/accounts/${account.id}`);
    await ui.page.getByRole('heading', { name: 'Credentials' }).waitFor();
    // No previous secret yet: nothing to revoke.
    expect(await ui.page.getByRole('button', { name: 'Revoke previous secret', exact: true }).count()).toBe(0);

    // Cancel changes nothing.
    await ui.page.getByRole('button', { name: 'Rotate Open API token', exact: true }).click();
    await ui.page.getByText('The current Open API token is refused at once').waitFor();
    await ui.page.getByRole('button', { name: 'Cancel' }).click();
    expect(await ui.page.getByRole('alertdialog').count()).toBe(0);
    expect(await openApiStatus(account, account.open_api_token)).toBe(200);

    await confirmAction('Rotate Open API token');
    const newToken = await revealed('open_api_token');
    expect(newToken).toMatch(/^\S{24,}$/);
    expect(newToken).not.toBe(account.open_api_token);
    expect(await openApiStatus(account, newToken)).toBe(200);
    expect(await openApiStatus(account, account.open_api_token)).toBe(401);
    await ui.browser.screenshot('account-credentials');
    // The token never travels in a URL, and is not shown again after a reload.
    expect(ui.browser.requests.some((request) => request.url.includes(newToken))).toBe(false);
    await ui.page.reload();
    await ui.page.getByRole('heading', { name: 'Credentials' }).waitFor();
    expect(await ui.page.locator('.secrets').count()).toBe(0);
    expect(await ui.page.content()).not.toContain(newToken);
  });

  it('rotates the signing secret, then revokes the previous one', async () => {
    const account = await createAccount(ui.configApi);
    await ui.page.goto(`${ui.configApi.url}/admin/accounts/${account.id}`);
    await ui.page.getByRole('heading', { name: 'Credentials' }).waitFor();

    await confirmAction('Rotate secret');
    const newSecret = await revealed('signing_secret');
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    expect(newSecret).not.toBe(account.signing_secret);
    expect((await accountView(account.id)).previous_secret_expires_at).toEqual(expect.any(String));

    await confirmAction('Revoke previous secret');
    await ui.page.getByRole('button', { name: 'Revoke previous secret', exact: true }).waitFor({ state: 'detached' });
    expect((await accountView(account.id)).previous_secret_expires_at).toBeNull();
    expect(ui.browser.problems).toEqual([]);
    expect(ui.browser.dialogs).toEqual([]);
  });
});
