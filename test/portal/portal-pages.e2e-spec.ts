import type { Locator, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { openStoredSecret } from '../support/stored-secrets';
import { type RunningApp, startApp } from '../support/apps';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { ensureConsoleBuilt } from '../support/console-build';
import { createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { onTestServer as onConfigApi, openPortal as openPortalOf } from '../support/portal-steps';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { eventRows, sendEvents } from '../support/worker-process';

/**
 * The account portal's pages (CONTRACT §10) in a real Chromium against config-api serving the built
 * console, a delivery worker and loopback receivers: what an API user sees with a portal link, and that
 * one account's session never shows another's data. Own database and Redis prefix.
 */
const namespace = new IsolatedNamespace('portal-pages');
Object.assign(process.env, namespace.overrides);
jest.setTimeout(180_000);

const XSS = '<img src=x onerror=alert(1)>';
let configApi: RunningApp;
let worker: RunningApp;
let browser: TestBrowser;
let page: Page;
let owner: TestAccount;
let stranger: TestAccount;
let ownerEvents: string[] = [];
let strangerEvents: string[] = [];
const receivers: TestReceiver[] = [];

async function expectText(locator: Locator, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
}

const openPortal = (account: TestAccount): Promise<string> => openPortalOf(page, configApi, account);
const onTestServer = (url: string): string => onConfigApi(configApi, url);

async function settled(eventIds: string[]): Promise<void> {
  await waitFor('events to settle', async () => {
    const rows = await eventRows(worker.app, eventIds);
    return rows.length === eventIds.length && rows.every((row) => ['delivered', 'failed'].includes(row.status));
  }, { timeoutMs: 30_000 });
}

beforeAll(async () => {
  await ensureConsoleBuilt();
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, { ...namespace.overrides });
  // The stranger's 3 events make 6 failing calls; at the default threshold (5) the breaker could hold
  // the last retry for its 30 s cooldown, as it should, and outlast the wait below. Not what these pages test.
  worker = await startApp(DeliveryWorkerModule, {
    ...namespace.overrides, RETRY_SCHEDULE: '100ms', DELIVERY_TIMEOUT_MS: '2000', RECONCILE_INTERVAL: '1m', BREAKER_FAILURE_THRESHOLD: '100',
  });
  const healthy = await new TestReceiver().start();
  const broken = await new TestReceiver().start();
  broken.respondStatus(500, {}, 'down');
  receivers.push(healthy, broken);
  owner = await createAccount(configApi);
  stranger = await createAccount(configApi);
  await setCallbackSettings(configApi.app, owner.id, { pushUrl: healthy.url, contentType: 'JSON', permissions: 'all' });
  await setCallbackSettings(configApi.app, stranger.id, { pushUrl: broken.url, contentType: 'JSON', permissions: 'all' });
  const ownerMessage = { ...structuredClone(SAMPLE_MESSAGES.Customer_create), nick_name: XSS };
  ownerEvents = (await sendEvents(worker.app, owner.id, [
    { action: 'Customer_create', message: ownerMessage, eventId: `owner-xss-${Date.now()}` },
    ...Array.from({ length: 4 }, () => ({ action: 'Organization_create', message: structuredClone(SAMPLE_MESSAGES.Organization_create) })),
  ])).map((event) => event.eventId);
  strangerEvents = (await sendEvents(worker.app, stranger.id, Array.from({ length: 3 }, () => ({
    action: 'Customer_update',
    message: { ...structuredClone(SAMPLE_MESSAGES.Customer_update), stranger_marker: 'only-for-the-stranger' },
  })))).map((event) => event.eventId);
  await settled([...ownerEvents, ...strangerEvents]);
  browser = await launchBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await configApi?.close();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await namespace.tearDown();
});

describe('account portal pages', () => {
  it('is served at /portal under the strict CSP, with its scripts from this origin', async () => {
    const response = await fetch(`${configApi.url}/portal`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/admin\/assets\/[^"]+\.js"/);
      expect(content.trim()).toBe('');
    }
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    const api = await fetch(`${configApi.url}/portal/v1/settings`);
    expect(api.status).toBe(401);
  });

  it('trades the link code for a tab session, drops it from the address bar and never sends it in a URL', async () => {
    await openPortal(owner);
    expect(new URL(page.url()).hash).toBe('');
    for (const name of ['Endpoint', 'Deliveries', 'Health']) await page.getByRole('link', { name, exact: true }).waitFor();
    const stored = await page.evaluate<string[]>('Object.values(sessionStorage)');
    expect(stored).toHaveLength(1);
    const token = stored[0];
    expect(browser.requests.some((request) => request.url.includes(token))).toBe(false);
    expect(browser.requests.some((request) => request.url.includes('/portal/v1/') && request.authorization === `Bearer ${token}`)).toBe(true);
    await expect(page.getByLabel('Push URL').inputValue()).resolves.toBe(receivers[0].url);
  });

  it('edits the settings, rotates the secret (shown once) and sends a test event that is delivered', async () => {
    await openPortal(owner);
    await page.getByLabel('Content type').selectOption('application/x-www-form-urlencoded');
    await page.getByLabel('shut_queue_create').uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expectText(page.getByRole('status'), 'Saved.');
    const [stored] = await configApi.app.get(DataSource).query<{ push_content_type: string; permissions: Record<string, boolean> }[]>(
      `SELECT d.content_type AS push_content_type, s.permissions FROM callback_settings s JOIN destinations d ON d.account_id = s.account_id AND d.id = 'primary' WHERE s.account_id = $1`,
      [owner.id],
    );
    expect(stored.push_content_type).toBe('application/x-www-form-urlencoded');
    expect(stored.permissions.shut_queue_create).toBe(false);

    await page.getByLabel('Push URL').fill('ftp://nowhere.example');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expectText(page.getByRole('alert'), 'push_url');

    // The delivery options are the endpoint's settings too (CONTRACT §10), saved through the portal API.
    await page.getByLabel('Ordering', { exact: true }).selectOption('subject');
    await page.getByLabel('Max per second').fill('30');
    await page.getByRole('button', { name: 'Save delivery options' }).click();
    await page.locator('[data-field="max-per-second"]').filter({ hasText: '30 calls per second' }).waitFor();
    const [options] = await configApi.app.get(DataSource).query<{ delivery_ordering: string; max_per_second: number }[]>(
      `SELECT ordering AS delivery_ordering, max_per_second FROM destinations WHERE account_id = $1 AND id = 'primary'`,
      [owner.id],
    );
    expect(options).toEqual({ delivery_ordering: 'subject', max_per_second: 30 });

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.locator('[data-field="new-secret"]').textContent()) ?? '';
    const [account] = await configApi.app.get(DataSource).query<{ signing_secret: string }[]>(`SELECT signing_secret FROM destinations WHERE account_id = $1 AND id = 'primary'`, [owner.id]);
    expect(secret).toBe(openStoredSecret(account.signing_secret));

    await page.getByLabel('Action').selectOption('ShutQueue_create');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const eventLink = page.getByRole('status').getByRole('link');
    await eventLink.waitFor();
    const eventId = (await eventLink.textContent()) ?? '';
    expect(eventId).toMatch(/^test_/);
    await eventLink.click();
    await waitFor('the test event to show as delivered', async () => {
      if ((await page.locator('[data-field="status"]').textContent()) === 'delivered') return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return false;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    await page.locator('[data-attempt="1"]').waitFor();
  });

  it('lists its deliveries with filters, shows messages as text and redelivers', async () => {
    await openPortal(owner);
    await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
    await page.locator(`tr[data-event-id="${ownerEvents[0]}"]`).waitFor();
    const shown = await page.locator('table.grid tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-event-id')));
    expect(shown.some((id) => strangerEvents.includes(id ?? ''))).toBe(false);

    await page.getByLabel('Action').selectOption('Organization_create');
    await page.getByRole('button', { name: 'Search' }).click();
    await waitFor('only Organization_create rows', async () => {
      const actions = await page.locator('table.grid tbody tr td[data-column="action"]').allTextContents();
      return actions.length === 4 && actions.every((action) => action === 'Organization_create');
    });

    await page.goto(`${configApi.url}/portal?page=event&id=${encodeURIComponent(ownerEvents[0])}`);
    const message = page.getByLabel('Message');
    await expectText(message, XSS);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(browser.dialogs).toEqual([]);
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await waitFor('a second attempt series', async () => {
      const [row] = await eventRows(worker.app, [ownerEvents[0]]);
      return row.series === 1 && row.status === 'delivered';
    }, { timeoutMs: 30_000 });
  });

  it("shows health charts for the hour, day and week", async () => {
    await openPortal(owner);
    await page.getByRole('link', { name: 'Health', exact: true }).click();
    const deliveries = page.locator('figure[data-chart="deliveries"]');
    await deliveries.waitFor();
    await waitFor('the hour chart drawn from data', async () => Number(await deliveries.getAttribute('data-nonzero')) > 0);
    for (const [label, points] of [['Last day', [24, 25]], ['Last week', [168, 169]]] as const) {
      await page.getByRole('button', { name: label }).click();
      await waitFor(`${label} points`, async () => (points as readonly number[]).includes(Number(await deliveries.getAttribute('data-points'))));
    }
    await page.locator('figure[data-chart="latency"]').waitFor();
  });

  it("never shows another account's data: its list, its event ids and its failed redelivery stay its own", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await openPortal(stranger);
    await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
    await page.locator(`tr[data-event-id="${strangerEvents[0]}"]`).waitFor();
    const shown = await page.locator('table.grid tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-event-id')));
    // Besides its events, its own operational events (CONTRACT §14: its failing receiver) are listed.
    expect(shown.filter((id) => !id?.startsWith('op_')).sort()).toEqual([...strangerEvents].sort());

    await page.getByRole('button', { name: 'Redeliver failed' }).click();
    await page.locator('.task[data-task-status="done"]').waitFor({ timeout: 30_000 });
    const ownerRows = await eventRows(worker.app, ownerEvents.slice(1));
    expect(ownerRows.every((row) => row.series === 0)).toBe(true);

    await page.goto(`${configApi.url}/portal?page=event&id=${encodeURIComponent(ownerEvents[0])}`);
    await expectText(page.getByRole('alert'), '404');
    // The page names the id asked for (from its own address), never anything stored with it.
    const content = await page.content();
    expect(content).not.toContain('&lt;img src=x');
    expect(await page.getByLabel('Message').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  });

  it("lets an operator open an account's portal from the admin console", async () => {
    await page.goto(`${configApi.url}/admin`);
    await page.getByLabel('Admin token').fill(process.env.ADMIN_TOKEN ?? '');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The token is kept only once the sign-in answered; navigating earlier would find the tab signed out.
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await page.goto(`${configApi.url}/admin/accounts/${owner.id}`);
    await page.getByRole('button', { name: 'Open portal' }).click();
    const link = page.getByRole('link', { name: "The account's portal" });
    const href = (await link.getAttribute('href')) ?? '';
    expect(href).toMatch(/\/portal#[A-Za-z0-9_-]{43}$/);
    expect(await link.getAttribute('rel')).toContain('noreferrer');
    const portalPage = await browser.context.newPage();
    await portalPage.goto(onTestServer(href));
    await portalPage.getByRole('heading', { name: 'Endpoint' }).waitFor();
    await expect(portalPage.getByLabel('Push URL').inputValue()).resolves.toBe(receivers[0].url);
    await portalPage.close();
  });
});
