import { adminCall } from '../support/admin-client';
import { useSignedInConsole } from '../support/browser';
import { createAccount } from '../support/fixtures';
import { insertEvents, setPrimaryStatus, useOwnRedisPrefix } from '../support/worker-process';
import type { RunningApp } from '../support/apps';
import { startTaskWorker } from '../support/task-worker';

/**
 * The account page's data protection panels (CONTRACT §12) in a real Chromium against the real
 * config-api serving the built console: erase a subject, set redaction fields, delete the account,
 * each behind a confirmation, and what each did is what the admin API then answers.
 */
useOwnRedisPrefix('console-data-protection');
jest.setTimeout(120_000);

const ui = useSignedInConsole();
// config-api records the erasure; a worker's task runners do it (a short call time-out: its second pass is due 2 s after the first).
let tasks: RunningApp | undefined;
beforeAll(async () => {
  tasks = await startTaskWorker({ DELIVERY_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await tasks?.close();
});

async function openAccount(accountId: number): Promise<void> {
  await ui.page.goto(`${ui.configApi.url}/admin/accounts/${accountId}`);
  await ui.page.getByRole('heading', { name: 'Erase a subject' }).waitFor();
}

describe('data protection on the account page', () => {
  it('erases a subject after a confirmation and shows how many events it cleared', async () => {
    const account = await createAccount(ui.configApi);
    const events = await insertEvents(ui.configApi.app, account.id, [
      { action: 'Customer_create', message: { id: 515, nick_name: 'to go' } },
      { action: 'ShutQueue_create', message: { customer_id: 515 } },
      { action: 'Customer_create', message: { id: 516, nick_name: 'stays' } },
    ]);
    await setPrimaryStatus(ui.configApi.app, events.map((event) => event.seq), 'delivered');
    await openAccount(account.id);

    await ui.page.getByLabel('Subject', { exact: true }).fill('customer:515');
    await ui.page.getByRole('button', { name: 'Erase subject', exact: true }).click();
    await ui.page.getByRole('alertdialog', { name: 'Erase subject' }).waitFor();
    // Cancel erases nothing.
    await ui.page.getByRole('button', { name: 'Cancel' }).click();
    expect(await ui.page.getByRole('alertdialog').count()).toBe(0);
    expect((await adminCall(ui.configApi, 'GET', `/admin/v1/events/${events[0].eventId}`)).body.erased).toBe(false);

    await ui.page.getByRole('button', { name: 'Erase subject', exact: true }).click();
    await ui.page.getByRole('button', { name: 'Confirm: Erase subject' }).click();
    await ui.page.locator('[data-erasure-status=done]').waitFor();
    expect((await ui.page.locator('[data-field=events-erased]').innerText()).trim()).toBe('2');
    await ui.browser.screenshot('account-erase-subject');
    for (const [index, erased] of [true, true, false].entries()) {
      expect((await adminCall(ui.configApi, 'GET', `/admin/v1/events/${events[index].eventId}`)).body.erased).toBe(erased);
    }

    await ui.page.goto(`${ui.configApi.url}/admin/events?account_id=${account.id}`);
    await ui.page.getByRole('link', { name: events[2].eventId }).waitFor();
    expect(await ui.page.locator('[data-field=erased]').count()).toBe(2);
    await ui.page.goto(`${ui.configApi.url}/admin/events/${events[0].eventId}`);
    await ui.page.locator('[data-field=erased]').waitFor();
  });

  it('saves redaction fields and shows them', async () => {
    const account = await createAccount(ui.configApi);
    await openAccount(account.id);
    await ui.page.getByLabel('Key names (comma-separated)').fill('cellphone, email');
    await ui.page.getByRole('button', { name: 'Save redaction fields' }).click();
    await ui.page.getByText('Saved; events that ended already are redacted in the background.').waitFor();
    await ui.page.locator('[data-field=redaction-fields]', { hasText: 'cellphone, email' }).waitFor();
    expect((await adminCall(ui.configApi, 'GET', `/admin/v1/accounts/${account.id}`)).body.redaction_fields).toEqual(['cellphone', 'email']);
  });

  it('deletes the account only once its email is typed in the confirmation', async () => {
    const account = await createAccount(ui.configApi);
    await openAccount(account.id);
    await ui.page.getByRole('button', { name: 'Delete account', exact: true }).click();
    const confirm = ui.page.getByRole('button', { name: 'Confirm: Delete account' });
    expect(await confirm.isDisabled()).toBe(true);
    await ui.page.getByLabel('Email').fill('someone-else@example.com');
    expect(await confirm.isDisabled()).toBe(true);
    await ui.page.getByLabel('Email').fill(account.email);
    await ui.browser.screenshot('account-delete');
    await confirm.click();
    await ui.page.waitForURL(/\/admin\/accounts\?deleted=/);
    expect((await adminCall(ui.configApi, 'GET', `/admin/v1/accounts/${account.id}`)).status).toBe(404);
    expect(ui.browser.problems).toEqual([]);
    expect(ui.browser.dialogs).toEqual([]);
  });
});
