import type { Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { adminCall } from '../support/admin-client';
import type { RunningApp } from '../support/apps';
import { type TestBrowser, usePortalBrowser } from '../support/browser';
import {
  addDestination,
  cell,
  deleteDestination,
  destinationRow,
  expectRefusalNaming,
  fillAndSave,
  HOSTILE,
  listedDestination,
  newDestinationForm,
  pauseAndResume,
} from '../support/destination-steps';
import { createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { primaryDestinationOf } from '../support/model-deliveries';
import { openPortalDestinations } from '../support/portal-steps';
import { type TestReceiver, useReceivers } from '../support/receiver';

/**
 * The portal's Destinations page (CONTRACT §10, §11) in a real Chromium against config-api serving the
 * built console: an API user lists, adds, pauses, resumes and deletes the account's destinations, its
 * push URL listed first as `primary`; refusals name the field and stored text stays text.
 */
jest.setTimeout(120_000);

const ui = usePortalBrowser();
const receivers = useReceivers();
let api: RunningApp;
let browser: TestBrowser;
let page: Page;
let pushReceiver: TestReceiver;
let receiver: TestReceiver;

beforeAll(async () => {
  ({ configApi: api, browser, page } = ui);
  [pushReceiver, receiver] = await Promise.all([receivers(), receivers()]);
});

const openDestinations = (account: TestAccount): Promise<void> => openPortalDestinations(page, api, account);

/** The push URL's pause, as its primary destination row stores it. */
async function primaryPaused(account: TestAccount): Promise<boolean | undefined> {
  return (await primaryDestinationOf(api.app.get(DataSource), account.id))?.paused;
}

describe('portal: Destinations', () => {
  it('lists the push URL first as primary, adds a webhook destination, pauses, resumes and deletes it', async () => {
    const account = await createAccount(api);
    await setCallbackSettings(api.app, account.id, { pushUrl: pushReceiver.url, contentType: 'JSON', permissions: 'all' });
    // Another account's destination never shows here (the list below is exactly this account's).
    const stranger = await createAccount(api);
    expect((await adminCall(api, 'POST', `/admin/v1/accounts/${stranger.id}/destinations`, { type: 'webhook', target: `${receiver.url}/stranger` })).status).toBe(201);
    await openDestinations(account);
    const primary = destinationRow(page, 'primary');
    await primary.waitFor();
    await expect(cell(primary, 'target').textContent()).resolves.toBe(pushReceiver.url);
    await expect(primary.getByRole('button', { name: 'Delete' }).count()).resolves.toBe(0);

    const { id } = await addDestination(page, api, { type: 'webhook', target: receiver.url, actions: 'ImSubSession_create' });
    const row = destinationRow(page, id);
    await row.waitFor();
    await expect(cell(row, 'id').textContent()).resolves.toBe(id);
    await expect(cell(row, 'type').textContent()).resolves.toBe('webhook');
    await expect(cell(row, 'target').textContent()).resolves.toBe(receiver.url);
    await expect(row.locator('[data-field="destination-state"]').getAttribute('data-state')).resolves.toBe('closed');
    const ids = await page.locator('tr[data-destination-id]').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-destination-id')));
    expect(ids).toEqual(['primary', id]);
    expect(await listedDestination(api, account.id, id)).toMatchObject({ type: 'webhook', target: receiver.url, actions: ['ImSubSession_create'], paused: false });
    await browser.screenshot('portal-destinations');

    await pauseAndResume(page, api, account.id, id);

    // The primary pauses and resumes from the same list.
    await primary.getByRole('button', { name: 'Pause', exact: true }).click();
    await primary.getByRole('button', { name: 'Resume', exact: true }).waitFor();
    expect(await primaryPaused(account)).toBe(true);
    await primary.getByRole('button', { name: 'Resume', exact: true }).click();
    await primary.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    expect(await primaryPaused(account)).toBe(false);

    await deleteDestination(page, api, account.id, id);
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });

  it('shows refusals naming the field, and hostile text only as text', async () => {
    const account = await createAccount(api);
    await openDestinations(account);
    await page.getByRole('button', { name: 'Add destination' }).click();
    const form = newDestinationForm(page);

    await fillAndSave(page, form, { type: 'webhook', target: 'not a url' });
    await expectRefusalNaming(page, form, 'target');

    await fillAndSave(page, form, { target: receiver.url, actions: HOSTILE });
    await expectRefusalNaming(page, form, 'actions');
    // The API names the action it refused, as sent: on the page it is text.
    await form.getByRole('alert').filter({ hasText: HOSTILE }).waitFor();

    await fillAndSave(page, form, { actions: '', filter: JSON.stringify({ $where: HOSTILE }) });
    await expectRefusalNaming(page, form, 'filter');

    const { id } = await addDestination(page, api, { filter: JSON.stringify({ 'customer.note': { $in: [HOSTILE] } }) });
    await cell(destinationRow(page, id), 'filter').filter({ hasText: HOSTILE }).waitFor();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(browser.dialogs).toEqual([]);
    expect(browser.problems).toEqual([]);
  });
});
