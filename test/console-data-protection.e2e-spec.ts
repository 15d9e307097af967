import type { Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { adminCall } from './support/admin-client';
import { type RunningApp, startApp } from './support/apps';
import { launchBrowser, signIntoConsole, type TestBrowser } from './support/browser';
import { ensureConsoleBuilt } from './support/console-build';
import { createAccount } from './support/fixtures';
import { insertEvents, useOwnRedisPrefix } from './support/worker-process';

/**
 * The account page's data protection panels (CONTRACT §12) in a real Chromium against the real
 * config-api serving the built console: erase a subject, set redaction fields, delete the account,
 * each behind a confirmation, and what each did is what the admin API then answers.
 */
useOwnRedisPrefix('console-data-protection');
jest.setTimeout(120_000);

let configApi: RunningApp;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  await ensureConsoleBuilt();
  configApi = await startApp(ConfigApiModule);
  browser = await launchBrowser();
  page = browser.page;
  await signIntoConsole(page, configApi.url);
});

afterAll(async () => {
  await browser?.close();
  await configApi?.close();
});

async function openAccount(accountId: number): Promise<void> {
  await page.goto(`${configApi.url}/admin/accounts/${accountId}`);
  await page.getByRole('heading', { name: 'Erase a subject' }).waitFor();
}

describe('data protection on the account page', () => {
  it('erases a subject after a confirmation and shows how many events it cleared', async () => {
    const account = await createAccount(configApi);
    const events = await insertEvents(configApi.app, account.id, [
      { action: 'Customer_create', message: { id: 515, nick_name: 'to go' } },
      { action: 'ShutQueue_create', message: { customer_id: 515 } },
      { action: 'Customer_create', message: { id: 516, nick_name: 'stays' } },
    ]);
    await configApi.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE account_id = $1`, [account.id]);
    await openAccount(account.id);

    await page.getByLabel('Subject', { exact: true }).fill('customer:515');
    await page.getByRole('button', { name: 'Erase subject', exact: true }).click();
    await page.getByRole('alertdialog', { name: 'Erase subject' }).waitFor();
    // Cancel erases nothing.
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect((await adminCall(configApi, 'GET', `/admin/v1/events/${events[0].eventId}`)).body.erased).toBe(false);

    await page.getByRole('button', { name: 'Erase subject', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm: Erase subject' }).click();
    await page.locator('[data-erasure-status=done]').waitFor();
    expect((await page.locator('[data-field=events-erased]').innerText()).trim()).toBe('2');
    await browser.screenshot('account-erase-subject');
    for (const [index, erased] of [true, true, false].entries()) {
      expect((await adminCall(configApi, 'GET', `/admin/v1/events/${events[index].eventId}`)).body.erased).toBe(erased);
    }

    await page.goto(`${configApi.url}/admin/events?account_id=${account.id}`);
    await page.getByRole('link', { name: events[2].eventId }).waitFor();
    expect(await page.locator('[data-field=erased]').count()).toBe(2);
    await page.goto(`${configApi.url}/admin/events/${events[0].eventId}`);
    await page.locator('[data-field=erased]').waitFor();
  });

  it('saves redaction fields and shows them', async () => {
    const account = await createAccount(configApi);
    await openAccount(account.id);
    await page.getByLabel('Key names (comma-separated)').fill('cellphone, email');
    await page.getByRole('button', { name: 'Save redaction fields' }).click();
    await page.getByText('Saved; events that ended already are redacted in the background.').waitFor();
    await page.locator('[data-field=redaction-fields]', { hasText: 'cellphone, email' }).waitFor();
    expect((await adminCall(configApi, 'GET', `/admin/v1/accounts/${account.id}`)).body.redaction_fields).toEqual(['cellphone', 'email']);
  });

  it('deletes the account only once its email is typed in the confirmation', async () => {
    const account = await createAccount(configApi);
    await openAccount(account.id);
    await page.getByRole('button', { name: 'Delete account', exact: true }).click();
    const confirm = page.getByRole('button', { name: 'Confirm: Delete account' });
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Email').fill('someone-else@example.com');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Email').fill(account.email);
    await browser.screenshot('account-delete');
    await confirm.click();
    await page.waitForURL(/\/admin\/accounts\?deleted=/);
    expect((await adminCall(configApi, 'GET', `/admin/v1/accounts/${account.id}`)).status).toBe(404);
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });
});
