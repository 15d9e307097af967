import type { Locator } from 'playwright-core';
import { DataSource } from 'typeorm';
import { adminCall } from '../support/admin-client';
import { useSignedInConsole } from '../support/browser';
import { createAccount, type TestAccount } from '../support/fixtures';
import { waitFor } from '@app/testing';

/**
 * The account page's delivery options (CONTRACT §9) in a real Chromium against config-api serving the
 * built console, on the run's PostgreSQL and Redis: shown, edited, checked in the browser and by the
 * server, and what the operator saved is what the API then answers.
 */
jest.setTimeout(120_000);

const ui = useSignedInConsole();

const field = (name: string): Locator => ui.page.locator(`[data-field="${name}"]`);
const optionsOf = async (account: TestAccount): Promise<unknown> => {
  const view = await adminCall(ui.configApi, 'GET', `/admin/v1/accounts/${account.id}`);
  return { ordering: view.body.ordering, max_per_second: view.body.max_per_second };
};
const putsSent = (): number => ui.browser.requests.filter((request) => request.url.endsWith('/delivery-options')).length;

async function openAccount(account: TestAccount): Promise<void> {
  await ui.page.goto(`${ui.configApi.url}/admin/accounts/${account.id}`);
  await ui.page.getByRole('heading', { name: 'Delivery options' }).waitFor();
}

describe('console: delivery options on the account page', () => {
  it('shows the defaults, saves both options, and lifts the pace when the field is emptied', async () => {
    const account = await createAccount(ui.configApi);
    await openAccount(account);
    await field('ordering').filter({ hasText: /^none/ }).waitFor();
    await field('max-per-second').filter({ hasText: 'no limit' }).waitFor();

    await ui.page.getByLabel('Ordering', { exact: true }).selectOption('subject');
    await ui.page.getByLabel('Max per second').fill('40');
    await ui.page.getByRole('button', { name: 'Save delivery options' }).click();
    await ui.page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    await field('ordering').filter({ hasText: /^subject/ }).waitFor();
    await field('max-per-second').filter({ hasText: '40 calls per second' }).waitFor();
    expect(await optionsOf(account)).toEqual({ ordering: 'subject', max_per_second: 40 });
    await ui.browser.screenshot('account-delivery-options');

    // A fresh load shows what was stored, in the view and in the form.
    await openAccount(account);
    await field('max-per-second').filter({ hasText: '40 calls per second' }).waitFor();
    await expect(ui.page.getByLabel('Ordering', { exact: true }).inputValue()).resolves.toBe('subject');
    await expect(ui.page.getByLabel('Max per second').inputValue()).resolves.toBe('40');

    await ui.page.getByLabel('Max per second').fill('');
    await ui.page.getByRole('button', { name: 'Save delivery options' }).click();
    await field('max-per-second').filter({ hasText: 'no limit' }).waitFor();
    expect(await optionsOf(account)).toEqual({ ordering: 'subject', max_per_second: null });
    expect(ui.browser.problems).toEqual([]);
    expect(ui.browser.dialogs).toEqual([]);
  });

  it('sends no out-of-range pace, and shows the server refusal when the account is gone', async () => {
    const account = await createAccount(ui.configApi);
    await openAccount(account);
    const before = putsSent();
    for (const value of ['0', '10001', '2.5']) {
      await ui.page.getByLabel('Max per second').fill(value);
      await ui.page.getByRole('button', { name: 'Save delivery options' }).click();
      await expect(ui.page.getByLabel('Max per second').evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid)).resolves.toBe(false);
    }
    expect(putsSent()).toBe(before);
    expect(await optionsOf(account)).toEqual({ ordering: 'none', max_per_second: null });

    await ui.configApi.app.get(DataSource).query('DELETE FROM accounts WHERE id = $1', [account.id]);
    await ui.page.getByLabel('Max per second').fill('5');
    await ui.page.getByRole('button', { name: 'Save delivery options' }).click();
    await ui.page.getByRole('alert').filter({ hasText: `404 not_found: account ${account.id} does not exist` }).waitFor();
    await waitFor('the PUT to be sent', () => putsSent() === before + 1);
    await expect(ui.page.getByRole('status').filter({ hasText: 'Saved' }).count()).resolves.toBe(0);
  });
});
