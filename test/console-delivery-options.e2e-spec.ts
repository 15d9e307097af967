import type { Locator, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { adminCall } from './support/admin-client';
import { type RunningApp, startApp } from './support/apps';
import { launchBrowser, signIntoConsole, type TestBrowser } from './support/browser';
import { ensureConsoleBuilt } from './support/console-build';
import { createAccount, type TestAccount } from './support/fixtures';
import { waitFor } from './support/wait-for';

/**
 * The account page's delivery options (CONTRACT §9) in a real Chromium against config-api serving the
 * built console, on the run's PostgreSQL and Redis: shown, edited, checked in the browser and by the
 * server, and what the operator saved is what the API then answers.
 */
jest.setTimeout(120_000);

const TOKEN = process.env.ADMIN_TOKEN ?? '';
let api: RunningApp;
let browser: TestBrowser;
let page: Page;

const field = (name: string): Locator => page.locator(`[data-field="${name}"]`);
const optionsOf = async (account: TestAccount): Promise<unknown> => {
  const view = await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}`);
  return { ordering: view.body.ordering, max_per_second: view.body.max_per_second };
};
const putsSent = (): number => browser.requests.filter((request) => request.url.endsWith('/delivery-options')).length;

async function openAccount(account: TestAccount): Promise<void> {
  await page.goto(`${api.url}/admin/accounts/${account.id}`);
  await page.getByRole('heading', { name: 'Delivery options' }).waitFor();
}

beforeAll(async () => {
  await ensureConsoleBuilt();
  api = await startApp(ConfigApiModule);
  browser = await launchBrowser();
  page = browser.page;
  await signIntoConsole(page, api.url, TOKEN);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('console: delivery options on the account page', () => {
  it('shows the defaults, saves both options, and lifts the pace when the field is emptied', async () => {
    const account = await createAccount(api);
    await openAccount(account);
    await field('ordering').filter({ hasText: /^none/ }).waitFor();
    await field('max-per-second').filter({ hasText: 'no limit' }).waitFor();

    await page.getByLabel('Ordering', { exact: true }).selectOption('subject');
    await page.getByLabel('Max per second').fill('40');
    await page.getByRole('button', { name: 'Save delivery options' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    await field('ordering').filter({ hasText: /^subject/ }).waitFor();
    await field('max-per-second').filter({ hasText: '40 calls per second' }).waitFor();
    expect(await optionsOf(account)).toEqual({ ordering: 'subject', max_per_second: 40 });
    await browser.screenshot('account-delivery-options');

    // A fresh load shows what was stored, in the view and in the form.
    await openAccount(account);
    await field('max-per-second').filter({ hasText: '40 calls per second' }).waitFor();
    await expect(page.getByLabel('Ordering', { exact: true }).inputValue()).resolves.toBe('subject');
    await expect(page.getByLabel('Max per second').inputValue()).resolves.toBe('40');

    await page.getByLabel('Max per second').fill('');
    await page.getByRole('button', { name: 'Save delivery options' }).click();
    await field('max-per-second').filter({ hasText: 'no limit' }).waitFor();
    expect(await optionsOf(account)).toEqual({ ordering: 'subject', max_per_second: null });
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });

  it('sends no out-of-range pace, and shows the server refusal when the account is gone', async () => {
    const account = await createAccount(api);
    await openAccount(account);
    const before = putsSent();
    for (const value of ['0', '10001', '2.5']) {
      await page.getByLabel('Max per second').fill(value);
      await page.getByRole('button', { name: 'Save delivery options' }).click();
      await expect(page.getByLabel('Max per second').evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid)).resolves.toBe(false);
    }
    expect(putsSent()).toBe(before);
    expect(await optionsOf(account)).toEqual({ ordering: 'none', max_per_second: null });

    await api.app.get(DataSource).query('DELETE FROM accounts WHERE id = $1', [account.id]);
    await page.getByLabel('Max per second').fill('5');
    await page.getByRole('button', { name: 'Save delivery options' }).click();
    await page.getByRole('alert').filter({ hasText: `404 not_found: account ${account.id} does not exist` }).waitFor();
    await waitFor('the PUT to be sent', () => putsSent() === before + 1);
    await expect(page.getByRole('status').filter({ hasText: 'Saved' }).count()).resolves.toBe(0);
  });
});
