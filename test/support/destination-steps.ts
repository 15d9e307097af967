import type { Locator, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { formatDurationMs } from '@app/runtime';
import { adminCall, type Json } from './admin-client';
import type { RunningApp } from './apps';
import { openStoredSecret } from './stored-secrets';

/**
 * The Destinations panel (CONTRACT §11) as a user drives it, shared by the console's account page and
 * the portal's Destinations page (one component serves both), and what the API then says of it.
 */
export const HOSTILE = '<img src=x onerror=alert(1)>';

export const destinationRow = (page: Page, id: string): Locator => page.locator(`tr[data-destination-id="${id}"]`);
export const cell = (row: Locator, column: string): Locator => row.locator(`td[data-column="${column}"]`);

/** The account's destinations as the admin API lists them (the view of §11). */
export async function listedDestinations(api: RunningApp, accountId: number): Promise<Json[]> {
  const answer = await adminCall(api, 'GET', `/admin/v1/accounts/${accountId}/destinations`);
  if (answer.status !== 200) throw new Error(`listing destinations answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.items as Json[];
}

/**
 * What a destination's view holds until someone changes it (CONTRACT §11, §13): the udesk format, no auth,
 * no ordering or pace, not paused, the deployment's retry schedule and no deadline, and a state whose
 * breaker is closed and which counts no held deliveries.
 */
export function newDestinationDefaults(api: RunningApp): Json {
  return {
    format: 'udesk',
    auth: null,
    ordering: 'none',
    max_per_second: null,
    paused: false,
    retry: { schedule: api.environment.delivery.retryScheduleMs.map(formatDurationMs), stop_on: [], disable_on: [] },
    expire_after: null,
    state: { breaker: 'closed', disabled_at: null, held: 0 },
  };
}

export async function listedDestination(api: RunningApp, accountId: number, id: string): Promise<Json | undefined> {
  return (await listedDestinations(api, accountId)).find((view) => view.id === id);
}

export interface FormFields {
  type?: string;
  target?: string;
  actions?: string;
  filter?: string;
  /** Fields under "More options" by label (a select gets its option chosen, an input or text area filled), in order. */
  more?: [label: string, value: string][];
}

async function openMoreOptions(form: Locator): Promise<void> {
  const more = form.locator('details.more-options');
  if ((await more.getAttribute('open')) === null) await more.locator('summary').click();
}

/** Fills the open destination form (only the fields given) and presses Save. */
export async function fillAndSave(page: Page, form: Locator, fields: FormFields): Promise<void> {
  if (fields.type !== undefined) await form.getByLabel('Type', { exact: true }).selectOption(fields.type);
  if (fields.target !== undefined) await form.getByLabel('Target', { exact: true }).fill(fields.target);
  if (fields.actions !== undefined) await form.getByLabel('Actions', { exact: true }).fill(fields.actions);
  if (fields.filter !== undefined) {
    await openMoreOptions(form);
    await form.getByLabel('Filter', { exact: true }).fill(fields.filter);
  }
  for (const [label, value] of fields.more ?? []) {
    await openMoreOptions(form);
    const input = form.getByLabel(label, { exact: true });
    if ((await input.evaluate((element) => element.tagName)) === 'SELECT') await input.selectOption(value);
    else await input.fill(value);
  }
  await form.getByRole('button', { name: 'Save', exact: true }).click();
}

export const newDestinationForm = (page: Page): Locator => page.getByRole('form', { name: 'New destination' });

/**
 * Adds a destination through the panel (its form opened unless it already is); returns its id and the secret shown once, after checking that
 * secret is the one stored (sealed) for it.
 */
export async function addDestination(page: Page, api: RunningApp, fields: FormFields): Promise<{ id: string; secret: string }> {
  if (!(await newDestinationForm(page).isVisible())) await page.getByRole('button', { name: 'Add destination' }).click();
  await fillAndSave(page, newDestinationForm(page), fields);
  const shown = page.locator('[data-field="destination-secret"]');
  await shown.waitFor();
  const secret = (await shown.textContent()) ?? '';
  const id = (await page.locator('[data-field="destination-new-id"]').textContent()) ?? '';
  const [stored] = await api.app.get(DataSource).query<{ signing_secret: string }[]>('SELECT signing_secret FROM destinations WHERE id = $1', [id]);
  expect(secret).toMatch(/^whsec_/);
  expect(openStoredSecret(stored.signing_secret)).toBe(secret);
  return { id, secret };
}

/** Pause, then Resume, checking the button and the state word in the row and `paused` in the API's view. */
export async function pauseAndResume(page: Page, api: RunningApp, accountId: number, id: string): Promise<void> {
  const row = destinationRow(page, id);
  await row.getByRole('button', { name: 'Pause', exact: true }).click();
  await row.getByRole('button', { name: 'Resume', exact: true }).waitFor();
  await row.locator('[data-field="destination-state"][data-state="paused"]').waitFor();
  expect((await listedDestination(api, accountId, id))?.paused).toBe(true);
  await row.getByRole('button', { name: 'Resume', exact: true }).click();
  await row.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await row.locator('[data-field="destination-state"]:not([data-state="paused"])').waitFor();
  expect((await listedDestination(api, accountId, id))?.paused).toBe(false);
}

export async function deleteDestination(page: Page, api: RunningApp, accountId: number, id: string): Promise<void> {
  await destinationRow(page, id).getByRole('button', { name: 'Delete', exact: true }).click();
  await destinationRow(page, id).waitFor({ state: 'detached' });
  expect(await listedDestination(api, accountId, id)).toBeUndefined();
}

/**
 * Refusals are shown with the field named, and hostile text (echoed in an error or stored in a filter)
 * only ever as text: no element made of it, no script run.
 */
export async function expectRefusalNaming(page: Page, form: Locator, field: string): Promise<void> {
  await form.getByRole('alert').filter({ hasText: field }).waitFor();
  expect(await page.locator('img[src="x"]').count()).toBe(0);
}
