import type { Locator } from 'playwright-core';
import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { useSignedInConsole } from '../support/browser';
import { addDestination, cell, destinationRow, fillAndSave, listedDestination } from '../support/destination-steps';
import { createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { insertEvents } from '../support/worker-process';

/**
 * The retry policy and deadline (CONTRACT §13) on the console's account page, in a real Chromium against
 * config-api serving the built console: the primary's own form and the other destinations' editor set
 * Retry schedule, Stop on, Disable on and Expire after; a bad value shows the server's words beside the
 * field it names and changes nothing; the list shows each policy and how many deliveries wait.
 */
jest.setTimeout(120_000);

const ui = useSignedInConsole();
const receiver = new TestReceiver();

beforeAll(async () => {
  await receiver.start();
});

afterAll(async () => {
  await receiver.stop();
});

async function openAccount(account: TestAccount): Promise<Locator> {
  await ui.page.goto(`${ui.configApi.url}/admin/accounts/${account.id}`);
  await ui.page.getByRole('heading', { name: 'Destinations' }).waitFor();
  const primary = destinationRow(ui.page, 'primary');
  await primary.waitFor();
  return primary;
}

/** The error shown beside a field, for the server detail's path. */
const fieldError = (form: Locator, path: string): Locator => form.locator(`[data-error-for="${path}"]`);

describe('console: retry policy', () => {
  it("edits the primary's policy and deadline, shows a refusal beside its field, and lists the held count", async () => {
    const account = await createAccount(ui.configApi);
    await setCallbackSettings(ui.configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    const primary = await openAccount(account);
    const stored = await listedDestination(ui.configApi, account.id, 'primary');
    await cell(primary, 'retry').filter({ hasText: `retries ${(stored?.retry.schedule as string[]).join(', ')} · no deadline` }).waitFor();

    await primary.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = ui.page.getByRole('form', { name: 'Retry policy of primary' });
    await expect(form.getByLabel('Retry schedule', { exact: true }).inputValue()).resolves.toBe((stored?.retry.schedule as string[]).join(', '));
    await form.getByLabel('Retry schedule', { exact: true }).fill('5s, 1m');
    await form.getByLabel('Stop on', { exact: true }).fill('404, 410');
    await form.getByLabel('Disable on', { exact: true }).fill('401');
    await form.getByLabel('Expire after', { exact: true }).fill('2h');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await form.waitFor({ state: 'detached' });
    await cell(primary, 'retry').filter({ hasText: 'retries 5s, 1m · stop on 404, 410 · disable on 401 · expires after 2h' }).waitFor();
    expect(await listedDestination(ui.configApi, account.id, 'primary')).toMatchObject({
      retry: { schedule: ['5s', '1m'], stop_on: [404, 410], disable_on: [401] },
      expire_after: '2h',
    });
    await ui.browser.screenshot('account-retry-policy');

    // Bad values: the server's own words beside each field it names, and nothing stored.
    await primary.getByRole('button', { name: 'Edit', exact: true }).click();
    await form.getByLabel('Retry schedule', { exact: true }).fill('5s, 5x');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(fieldError(form, 'retry.schedule').textContent()).resolves.toBe('"5x" is not a duration from 100ms to 7d (write it as "500ms", "30s", "5m", "2h" or "1d")');
    await expect(form.getByLabel('Retry schedule', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await form.getByLabel('Retry schedule', { exact: true }).fill('5s');
    await form.getByLabel('Stop on', { exact: true }).fill('404, 429');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(fieldError(form, 'retry.stop_on').textContent()).resolves.toBe('429 is always retried (408 and 429 ask for a later call)');
    await expect(fieldError(form, 'retry.schedule').count()).resolves.toBe(0);
    await form.getByLabel('Stop on', { exact: true }).fill('404');
    await form.getByLabel('Expire after', { exact: true }).fill('31d');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await fieldError(form, 'expire_after').filter({ hasText: 'must be a duration from 1s to 30d' }).waitFor();
    expect(await listedDestination(ui.configApi, account.id, 'primary')).toMatchObject({ retry: { schedule: ['5s', '1m'], stop_on: [404, 410] }, expire_after: '2h' });

    // Emptied: one call only, no status list, no deadline.
    for (const label of ['Retry schedule', 'Stop on', 'Disable on', 'Expire after']) await form.getByLabel(label, { exact: true }).fill('');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await cell(primary, 'retry').filter({ hasText: /^one call only · no deadline$/ }).waitFor();
    expect(await listedDestination(ui.configApi, account.id, 'primary')).toMatchObject({ retry: { schedule: [], stop_on: [], disable_on: [] }, expire_after: null });

    // Deliveries the worker holds (here: the primary's open rows marked as held by a pause) are counted.
    await ui.configApi.app.get(DataSource).query("UPDATE destinations SET ordering = 'subject' WHERE account_id = $1 AND id = 'primary'", [account.id]);
    const events = [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id } }));
    await insertEvents(ui.configApi.app, account.id, events);
    await ui.configApi.app.get(DataSource).query("UPDATE open_deliveries SET held = 'paused' WHERE account_id = $1 AND destination_id = 'primary'", [account.id]);
    await openAccount(account);
    await expect(primary.locator('[data-field="destination-held"]').textContent()).resolves.toBe(' 3 waiting');
    expect(ui.browser.problems).toEqual([]);
    expect(ui.browser.dialogs).toEqual([]);
  });

  it("sets another destination's policy when adding it and when editing it", async () => {
    const account = await createAccount(ui.configApi);
    await openAccount(account);
    const { id } = await addDestination(ui.page, ui.configApi, {
      type: 'webhook',
      target: receiver.url,
      more: [
        ['Retry schedule', '1s, 2s'],
        ['Stop on', '404'],
        ['Expire after', '30m'],
      ],
    });
    expect(await listedDestination(ui.configApi, account.id, id)).toMatchObject({ retry: { schedule: ['1s', '2s'], stop_on: [404], disable_on: [] }, expire_after: '30m' });
    const row = destinationRow(ui.page, id);
    await cell(row, 'retry').filter({ hasText: 'retries 1s, 2s · stop on 404 · expires after 30m' }).waitFor();

    // One status in both lists: refused, named beside Disable on.
    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = ui.page.getByRole('form', { name: `Edit destination ${id}` });
    await fillAndSave(ui.page, form, { more: [['Disable on', '404, 403']] });
    await expect(fieldError(form, 'retry.disable_on').textContent()).resolves.toBe('404 is in both stop_on and disable_on');
    await form.getByRole('alert').filter({ hasText: 'retry.disable_on' }).first().waitFor();
    expect((await listedDestination(ui.configApi, account.id, id))?.retry.disable_on).toEqual([]);

    await fillAndSave(ui.page, form, { more: [['Disable on', '403']] });
    await form.waitFor({ state: 'detached' });
    await cell(row, 'retry').filter({ hasText: 'retries 1s, 2s · stop on 404 · disable on 403 · expires after 30m' }).waitFor();
    expect(await listedDestination(ui.configApi, account.id, id)).toMatchObject({ retry: { schedule: ['1s', '2s'], stop_on: [404], disable_on: [403] }, expire_after: '30m' });
    expect(ui.browser.problems).toEqual([]);
  });
});
