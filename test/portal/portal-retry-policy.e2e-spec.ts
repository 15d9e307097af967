import type { Locator, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import type { RunningApp } from '../support/apps';
import { type TestBrowser, usePortalBrowser } from '../support/browser';
import { addDestination, cell, destinationRow, fillAndSave, listedDestination } from '../support/destination-steps';
import { createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { openPortalDestinations } from '../support/portal-steps';
import { TestReceiver } from '../support/receiver';
import { insertEvents } from '../support/worker-process';

/**
 * The retry policy and deadline (CONTRACT §13) on the portal's Destinations page, in a real Chromium
 * against config-api serving the built portal: the API user sets the push URL's policy and another
 * destination's through the portal API, sees the server's words beside a bad field, and the held count.
 */
jest.setTimeout(120_000);

const ui = usePortalBrowser();
let api: RunningApp;
let browser: TestBrowser;
let page: Page;
const receiver = new TestReceiver();

beforeAll(async () => {
  ({ configApi: api, browser, page } = ui);
  await receiver.start();
});

afterAll(async () => {
  await receiver.stop();
});

const openDestinations = (account: TestAccount): Promise<void> => openPortalDestinations(page, api, account);

const fieldError = (form: Locator, path: string): Locator => form.locator(`[data-error-for="${path}"]`);
const input = (form: Locator, label: string): Locator => form.getByLabel(label, { exact: true });

describe('portal: retry policy on the Destinations page', () => {
  it("sets the push URL's policy, shows a refusal beside its field, and shows what waits", async () => {
    const account = await createAccount(api);
    await setCallbackSettings(api.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    await openDestinations(account);
    const primary = destinationRow(page, 'primary');
    await primary.waitFor();

    await primary.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Retry policy of primary' });
    await input(form, 'Retry schedule').fill('30s, 5m, 1h');
    await input(form, 'Disable on').fill('401, 403');
    await input(form, 'Expire after').fill('1d');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await form.waitFor({ state: 'detached' });
    await cell(primary, 'retry').filter({ hasText: 'retries 30s, 5m, 1h · disable on 401, 403 · expires after 1d' }).waitFor();
    expect(await listedDestination(api, account.id, 'primary')).toMatchObject({
      retry: { schedule: ['30s', '5m', '1h'], stop_on: [], disable_on: [401, 403] },
      expire_after: '1d',
    });
    await browser.screenshot('portal-retry-policy');

    await primary.getByRole('button', { name: 'Edit', exact: true }).click();
    await input(form, 'Stop on').fill('500');
    await input(form, 'Retry schedule').fill(Array.from({ length: 21 }, () => '1s').join(', '));
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(fieldError(form, 'retry.stop_on').textContent()).resolves.toBe('500 is not an HTTP status from 400 to 499');
    await expect(fieldError(form, 'retry.schedule').textContent()).resolves.toBe('must be a list of 0 to 20 durations such as "30s", "5m", "2h", "1d"');
    await expect(input(form, 'Stop on').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(fieldError(form, 'expire_after').count()).resolves.toBe(0);
    expect((await listedDestination(api, account.id, 'primary'))?.retry).toEqual({ schedule: ['30s', '5m', '1h'], stop_on: [], disable_on: [401, 403] });
    await form.getByRole('button', { name: 'Cancel', exact: true }).click();

    // Two deliveries held (as the worker marks them while the push URL is paused) are counted on the row.
    await api.app.get(DataSource).query("UPDATE destinations SET ordering = 'subject' WHERE account_id = $1 AND id = 'primary'", [account.id]);
    await insertEvents(api.app, account.id, [7, 8].map((id) => ({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id } })));
    await api.app.get(DataSource).query("UPDATE open_deliveries SET held = 'paused' WHERE account_id = $1 AND destination_id = 'primary'", [account.id]);
    await openDestinations(account);
    await expect(primary.locator('[data-field="destination-held"]').textContent()).resolves.toBe(' 2 waiting');
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });

  it("adds a destination with its own policy and edits its deadline", async () => {
    const account = await createAccount(api);
    await openDestinations(account);
    const { id } = await addDestination(page, api, { type: 'webhook', target: receiver.url, more: [['Retry schedule', '500ms'], ['Stop on', '404, 410']] });
    expect(await listedDestination(api, account.id, id)).toMatchObject({ retry: { schedule: ['500ms'], stop_on: [404, 410], disable_on: [] }, expire_after: null });
    const row = destinationRow(page, id);
    await cell(row, 'retry').filter({ hasText: 'retries 500ms · stop on 404, 410 · no deadline' }).waitFor();

    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: `Edit destination ${id}` });
    await fillAndSave(page, form, { more: [['Expire after', 'soon']] });
    await fieldError(form, 'expire_after').filter({ hasText: 'must be a duration from 1s to 30d' }).waitFor();
    await fillAndSave(page, form, { more: [['Expire after', '45m']] });
    await form.waitFor({ state: 'detached' });
    await cell(row, 'retry').filter({ hasText: 'retries 500ms · stop on 404, 410 · expires after 45m' }).waitFor();
    expect((await listedDestination(api, account.id, id))?.expire_after).toBe('45m');
    expect(browser.problems).toEqual([]);
  });
});
