import type { Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import type { RunningApp } from '../support/apps';
import { type TestBrowser, useSignedInConsole } from '../support/browser';
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
import { adminCall } from '../support/admin-client';
import { createAccount, type TestAccount } from '../support/fixtures';
import { insertDeliveryRows, insertEventRows, primaryDeliveryOf } from '../support/model-deliveries';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { openStoredSecret } from '../support/stored-secrets';

/**
 * The account page's Destinations panel (CONTRACT §11) in a real Chromium against config-api serving the
 * built console, on the run's PostgreSQL and Redis: what the operator adds, edits, pauses, resumes and
 * deletes is what the admin API then answers, refusals name the field, and stored text stays text.
 */
jest.setTimeout(120_000);

const ui = useSignedInConsole();
const receivers = useReceivers();
let api: RunningApp;
let browser: TestBrowser;
let page: Page;
let receiver: TestReceiver;

beforeAll(async () => {
  ({ configApi: api, browser, page } = ui);
  receiver = await receivers();
});

async function openAccount(account: TestAccount): Promise<void> {
  await page.goto(`${api.url}/admin/accounts/${account.id}`);
  await page.getByRole('heading', { name: 'Destinations' }).waitFor();
}

describe("console: an account's destinations", () => {
  it('adds a webhook destination, lists it with its id, type, target and state, pauses, resumes, edits, enables and deletes it', async () => {
    const account = await createAccount(api);
    await openAccount(account);
    const { id } = await addDestination(page, api, { type: 'webhook', target: receiver.url, actions: 'Customer_create, Organization_create' });
    expect(id).toMatch(/^dst_/);
    const row = destinationRow(page, id);
    await row.waitFor();
    await expect(cell(row, 'id').textContent()).resolves.toBe(id);
    await expect(cell(row, 'type').textContent()).resolves.toBe('webhook');
    await expect(cell(row, 'target').textContent()).resolves.toBe(receiver.url);
    await expect(cell(row, 'actions').textContent()).resolves.toBe('Customer_create, Organization_create');
    await expect(row.locator('[data-field="destination-state"]').getAttribute('data-state')).resolves.toBe('closed');
    expect(await listedDestination(api, account.id, id)).toMatchObject({
      type: 'webhook',
      target: receiver.url,
      actions: ['Customer_create', 'Organization_create'],
      paused: false,
      state: { disabled_at: null },
    });
    await browser.screenshot('account-destinations');

    await pauseAndResume(page, api, account.id, id);

    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    await fillAndSave(page, page.getByRole('form', { name: `Edit destination ${id}` }), { actions: 'Organization_create' });
    await cell(row, 'actions').filter({ hasText: /^Organization_create$/ }).waitFor();
    expect((await listedDestination(api, account.id, id))?.actions).toEqual(['Organization_create']);

    // The worker disabled it (every attempt failed for ENDPOINT_DISABLE_AFTER): saving its target enables it.
    await api.app.get(DataSource).query("UPDATE destinations SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1", [id]);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await row.locator('[data-field="destination-state"][data-state="disabled"]').waitFor();
    expect((await listedDestination(api, account.id, id))?.state.disabled_at).toEqual(expect.any(String));
    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    await fillAndSave(page, page.getByRole('form', { name: `Edit destination ${id}` }), {});
    await row.locator('[data-field="destination-state"][data-state="closed"]').waitFor();
    expect((await listedDestination(api, account.id, id))?.state.disabled_at).toBeNull();

    await deleteDestination(page, api, account.id, id);
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });

  it('shows refusals naming the field, and hostile text only as text', async () => {
    const account = await createAccount(api);
    await openAccount(account);
    await page.getByRole('button', { name: 'Add destination' }).click();
    const form = newDestinationForm(page);

    await fillAndSave(page, form, { type: 'webhook', target: 'ftp://nowhere.example/hook' });
    await expectRefusalNaming(page, form, 'target');
    await expect(form.getByLabel('Target', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');

    await fillAndSave(page, form, { target: receiver.url, actions: `Customer_create, ${HOSTILE}` });
    await expectRefusalNaming(page, form, 'actions');
    // The API names the action it refused, as sent: on the page it is text.
    await form.getByRole('alert').filter({ hasText: HOSTILE }).waitFor();

    // Not JSON: refused in the page, naming the field, before anything is sent.
    await fillAndSave(page, form, { actions: 'Customer_create', filter: '{"nick_name":' });
    await expectRefusalNaming(page, form, 'filter');

    const { id } = await addDestination(page, api, { filter: JSON.stringify({ nick_name: HOSTILE }) });
    await cell(destinationRow(page, id), 'filter').filter({ hasText: HOSTILE }).waitFor();
    expect((await listedDestination(api, account.id, id))?.filter).toEqual({ nick_name: HOSTILE });
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(browser.dialogs).toEqual([]);
    expect(browser.problems).toEqual([]);
  });

  it("never shows a target's password, and an edit that leaves the target alone keeps it", async () => {
    const account = await createAccount(api);
    await openAccount(account);
    const target = 'amqp://publisher:hunter2-secret@127.0.0.1:5672/%2F?exchange=events&routing_key=callbacks';
    const { id } = await addDestination(page, api, { type: 'rabbitmq', target });
    const row = destinationRow(page, id);
    await expect(cell(row, 'target').textContent()).resolves.toContain('***');
    expect(await page.content()).not.toContain('hunter2-secret');

    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    await fillAndSave(page, page.getByRole('form', { name: `Edit destination ${id}` }), { actions: 'Customer_update' });
    await cell(row, 'actions').filter({ hasText: /^Customer_update$/ }).waitFor();
    const [stored] = await api.app.get(DataSource).query<{ target: string }[]>('SELECT target FROM destinations WHERE id = $1', [id]);
    expect(openStoredSecret(stored.target)).toBe(target);
    expect(browser.requests.some((request) => request.url.includes('hunter2'))).toBe(false);
  });

  it("sets a webhook's header auth, shows only its type, keeps it through an edit and removes it", async () => {
    const account = await createAccount(api);
    await openAccount(account);
    const auth = { type: 'header', name: 'x-api-key', value: 'hunter3-header-value' };
    const { id } = await addDestination(page, api, {
      type: 'webhook',
      target: receiver.url,
      more: [['Auth', 'header'], ['Header name', auth.name], ['Header value', auth.value], ['Format', 'cloudevents'], ['Max per second', '25']],
    });
    const row = destinationRow(page, id);
    await row.filter({ hasText: 'auth header' }).waitFor();
    expect(await listedDestination(api, account.id, id)).toMatchObject({ auth: { type: 'header' }, format: 'cloudevents', max_per_second: 25 });
    expect(await page.content()).not.toContain(auth.value);
    const storedAuth = async (): Promise<string | null> => {
      const [stored] = await api.app.get(DataSource).query<{ auth: string | null }[]>('SELECT auth FROM destinations WHERE id = $1', [id]);
      return stored.auth === null ? null : openStoredSecret(stored.auth);
    };
    expect(JSON.parse((await storedAuth()) ?? 'null')).toEqual(auth);

    // The form never holds the credential: an edit of something else leaves it as stored.
    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('form', { name: `Edit destination ${id}` });
    await expect(edit.getByLabel('Auth', { exact: true }).inputValue()).resolves.toBe('keep');
    await fillAndSave(page, edit, { more: [['Max per second', '']] });
    await row.filter({ hasText: 'no pace limit' }).waitFor();
    expect((await listedDestination(api, account.id, id))?.max_per_second).toBeNull();
    expect(JSON.parse((await storedAuth()) ?? 'null')).toEqual(auth);

    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    await fillAndSave(page, page.getByRole('form', { name: `Edit destination ${id}` }), { more: [['Auth', 'none']] });
    await row.filter({ hasNotText: 'auth header' }).waitFor();
    expect((await listedDestination(api, account.id, id))?.auth).toBeNull();
    expect(await storedAuth()).toBeNull();
  });

  it("shows an event's delivery to each destination, errors as text, and redelivers to one destination only", async () => {
    const account = await createAccount(api);
    const created = await adminCall(api, 'POST', `/admin/v1/accounts/${account.id}/destinations`, { type: 'webhook', target: receiver.url });
    const destination = created.body.id as string;
    // What ingest and a worker would have written: the primary delivered, the destination failed.
    const db = api.app.get(DataSource);
    const eventId = `console-dst-${Date.now()}`;
    const [{ seq }] = await insertEventRows(db, account.id, [{ eventId, action: 'Customer_create', message: { id: 1 } }]);
    await insertDeliveryRows(db, [
      { seq, destinationId: 'primary', accountId: account.id, status: 'delivered', attempts: 1, seriesAttempts: 1 },
      { seq, destinationId: destination, accountId: account.id, status: 'failed', attempts: 1, seriesAttempts: 1, lastError: `HTTP 503 ${HOSTILE}` },
    ]);
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers, request_body, response_status, response_body, error, destination_id)
       VALUES ($1, 0, 1, now(), 9, $2, '{}', '{}', 503, $3, 'HTTP 503', $4)`,
      [seq, receiver.url, HOSTILE, destination],
    );

    await page.goto(`${api.url}/admin/events/${eventId}`);
    await page.getByRole('heading', { name: 'Destinations (2)' }).waitFor();
    const row = page.locator(`tr[data-delivery-destination="${destination}"]`);
    await row.locator('td[data-column="status"]').filter({ hasText: 'failed' }).waitFor();
    await row.filter({ hasText: `HTTP 503 ${HOSTILE}` }).waitFor();
    await row.getByText('Attempts', { exact: true }).click();
    await row.locator(`[data-destination-attempt="1"]`).filter({ hasText: HOSTILE }).waitFor();
    await expect(page.locator('tr[data-delivery-destination="primary"] td[data-column="status"]').textContent()).resolves.toBe('delivered');
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    await row.getByRole('button', { name: `Redeliver to ${destination}` }).click();
    await row.locator('td[data-column="status"]').filter({ hasText: 'queued' }).waitFor();
    const [after] = await db.query<{ series: number; status: string }[]>(
      'SELECT series, status FROM deliveries WHERE event_seq = $1 AND destination_id = $2',
      [seq, destination],
    );
    expect(after).toEqual({ series: 1, status: 'queued' });
    // The event's own series is its primary delivery's: untouched by a redelivery to another destination.
    expect((await primaryDeliveryOf(db, eventId))?.series).toBe(0);
    expect(browser.dialogs).toEqual([]);
  });
});
