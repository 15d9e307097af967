import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { ensureConsoleBuilt } from '../support/console-build';
import { ConsoleScenario, XSS, XSS_EVENT_ID } from '../support/console-scenario';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { updatePrimaryDestination } from '../support/model-deliveries';
import { waitFor } from '@app/testing';

/**
 * The operators' console in a real Chromium against the real apps (config-api serving the built console,
 * ingest, a delivery worker) with real PostgreSQL, Redis and loopback receivers. Needs the console built
 * into dist/console (`npm run build`); the suite builds it itself when it is missing or stale.
 *
 * The steps share one browser tab and one seeded data set (support/console-scenario.ts) and run in order,
 * like an operator's session. Own database and Redis prefix: the account list, counts and charts hold this
 * suite's data only.
 */
const namespace = new IsolatedNamespace('console');
// Fixtures announce settings changes on process.env's prefix: make it this suite's (Jest isolates env per file).
Object.assign(process.env, namespace.overrides);
jest.setTimeout(120_000);

const TOKEN = process.env.ADMIN_TOKEN ?? '';
const scenario = new ConsoleScenario(namespace);
let browser: TestBrowser;
let page: Page;

const consoleUrl = (path = ''): string => `${scenario.configApi.url}/admin${path}`;
const admin = scenario.admin.bind(scenario);
const rowsOf = (selector: string) => page.locator(`table.grid tbody tr${selector}`);

async function signIn(): Promise<void> {
  await page.goto(consoleUrl());
  await page.getByLabel('Admin token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Overview' }).waitFor();
}

beforeAll(async () => {
  await ensureConsoleBuilt();
  await scenario.start();
  browser = await launchBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await scenario.stop();
});

describe('operators console', () => {
  it('is served at /admin with a strict CSP, no inline script, and the admin API untouched', async () => {
    const index = await fetch(consoleUrl('/events?status=failed'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await index.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/admin\/assets\/[^"]+\.js"/);
      expect(content.trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+=|style=/i);

    const csp = index.headers.get('content-security-policy') ?? '';
    const directives = Object.fromEntries(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['base-uri']).toEqual(["'none'"]);
    expect(directives['form-action']).toEqual(["'self'"]);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('referrer-policy')).toBe('no-referrer');

    const asset = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? '';
    const script = await fetch(`${scenario.configApi.url}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toBe(csp);
    expect((await fetch(consoleUrl('/assets/missing.js'))).status).toBe(404);

    // The same headers on the API, and unknown API paths stay JSON 404s, not the console page.
    const api = await admin('GET', '/admin/v1/events?limit=1');
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBe(csp);
    const unknown = await admin('GET', '/admin/v1/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('refuses a wrong admin token with a visible message, then signs in and keeps the token in the tab only', async () => {
    await page.goto(consoleUrl());
    await page.getByLabel('Admin token').fill('not-the-admin-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.getByRole('alert'), 'The admin token was refused.');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await browser.screenshot('sign-in-refused');

    await signIn();
    for (const name of ['Overview', 'Events', 'Accounts', 'Bot calls']) await page.getByRole('link', { name, exact: true }).waitFor();
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([TOKEN]);
    expect(await page.evaluate('localStorage.length + document.cookie.length')).toBe(0);
  });

  it('draws the overview from real data: charts, counts by status, queue and troubled endpoints', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    const deliveries = page.locator('figure[data-chart="deliveries"]');
    const latency = page.locator('figure[data-chart="latency"]');
    await deliveries.locator('canvas').waitFor();
    await latency.locator('canvas').waitFor();
    expect(Number(await deliveries.getAttribute('data-points'))).toBeGreaterThanOrEqual(60);
    expect(Number(await deliveries.getAttribute('data-nonzero'))).toBeGreaterThan(0);
    expect(Number(await latency.getAttribute('data-nonzero'))).toBeGreaterThan(0);

    const counts = (await admin('GET', `/admin/v1/stats?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).body;
    expect(counts.counts.delivered).toBe(scenario.healthyEvents.length);
    await expectText(page.locator('td[data-status="delivered"]'), String(scenario.healthyEvents.length));
    await expectText(page.locator('td[data-status="failed"]'), String(scenario.brokenEvents.length + scenario.flakyEvents.length));

    await page.getByRole('heading', { name: 'Delivery queue' }).waitFor();
    await expectText(page.locator('section', { has: page.getByRole('heading', { name: 'Delivery queue' }) }), 'Oldest waiting job');
    const troubled = page.locator('section', { has: page.getByRole('heading', { name: 'Endpoints in trouble' }) });
    await expectText(troubled, scenario.broken.email);

    await page.getByRole('button', { name: 'Last day' }).click();
    await page.waitForURL(/\/admin\?range=day$/);
    await deliveries.locator('canvas').waitFor();
    expect(Number(await deliveries.getAttribute('data-nonzero'))).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.waitForURL(/\/admin\?range=hour$/);
    await page.waitForFunction(`Number(document.querySelector('figure[data-chart="latency"]')?.getAttribute('data-nonzero')) > 0`);
    await browser.screenshot('overview');
  });

  it('searches events by status and action, newest first, with more pages on demand', async () => {
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/status=failed/);
    await waitForRows('[data-event-id]', scenario.brokenEvents.length + scenario.flakyEvents.length);
    expect(await page.locator('table.grid tbody .badge').allTextContents()).toEqual(Array(scenario.brokenEvents.length + scenario.flakyEvents.length).fill('failed'));

    await page.getByLabel('Action').selectOption('ImSubSession_create');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/action=ImSubSession_create/);
    await waitForRows('[data-event-id]', 1);
    expect(await rowsOf('').first().getAttribute('data-event-id')).toBe(scenario.brokenEvents[2]);

    // The URL holds the filters: opening it afresh shows the same list; newest first, 50 a page.
    await page.goto(consoleUrl(`/events?account_id=${scenario.healthy.id}`));
    await waitForRows('[data-event-id]', 50);
    expect(await rowsOf('').first().getAttribute('data-event-id')).toBe(XSS_EVENT_ID);
    await page.getByRole('button', { name: 'Load more' }).click();
    await waitForRows('[data-event-id]', scenario.healthyEvents.length);
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    await browser.screenshot('events');

    // Search inside messages: a value anywhere in the message, within a time range the form fills in.
    await page.getByLabel('Message contains').fill(XSS);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/[?&]q=.*since=|since=.*[?&]q=/);
    await waitForRows('[data-event-id]', 1);
    expect(await rowsOf('').first().getAttribute('data-event-id')).toBe(XSS_EVENT_ID);
  });

  it('opens an event with its message and every attempt, and Redeliver changes its status', async () => {
    await page.goto(consoleUrl(`/events?account_id=${scenario.flaky.id}&status=failed`));
    await waitForRows('[data-event-id]', scenario.flakyEvents.length);
    const eventId = scenario.flakyEvents[0];
    await page.getByRole('link', { name: eventId, exact: true }).click();
    await page.waitForURL(new RegExp(`/admin/events/${eventId}$`));
    await expectText(page.locator('[data-field="status"]'), 'failed');
    await expectText(page.getByLabel('Message', { exact: true }), '"changes"');
    const attempts = page.locator('article.attempt');
    await expect(attempts.count()).resolves.toBe(3);
    const first = attempts.first();
    await expectText(first, 'webhook-id');
    await expectText(first, eventId);
    await expectText(first, 'HTTP 503');
    await expectText(first, 'maintenance');
    await expectText(first.getByLabel('Request body'), '"action": "Organization_update"');

    // The receiver is back; its breaker is still open, but a manual redelivery's first call always goes out.
    scenario.flakyReceiver.respondStatus(200, { 'content-type': 'text/plain' }, 'back');
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.locator('[data-field="status"]', { hasText: 'delivered' }).waitFor({ timeout: 20_000 });
    await expect(attempts.count()).resolves.toBe(4);
    await expectText(attempts.last(), 'HTTP 200');
    await browser.screenshot('event');
  });

  it('redelivers everything a filter matches as a background task, with its progress to the end', async () => {
    await page.goto(consoleUrl(`/events?account_id=${scenario.flaky.id}&status=failed`));
    await waitForRows('[data-event-id]', scenario.flakyEvents.length - 1);
    await page.getByRole('button', { name: 'Redeliver all matching' }).click();
    await page.getByRole('button', { name: 'Start redelivery' }).click();
    const task = page.locator('.task');
    await task.locator('progress').waitFor();
    await page.locator('.task[data-task-status="done"]').waitFor({ timeout: 30_000 });
    await expectText(task, `Done: ${scenario.flakyEvents.length - 1} of ${scenario.flakyEvents.length - 1} events`);
    expect(await task.locator('progress').evaluate((bar: { value: number; max: number }) => [bar.value, bar.max])).toEqual([scenario.flakyEvents.length - 1, scenario.flakyEvents.length - 1]);
    await browser.screenshot('events-redeliver-all');
    await scenario.settled(scenario.flakyEvents, ['delivered']);
  });

  it('searches and opens accounts, enables a disabled endpoint and bulk-redelivers failed events with progress', async () => {
    await page.getByRole('link', { name: 'Accounts', exact: true }).click();
    await waitForRows('[data-account-id]', 4);
    await page.getByLabel('Search').fill(scenario.broken.email.slice(0, -12));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/search=/);
    await waitForRows('[data-account-id]', 1);
    await page.getByRole('link', { name: String(scenario.broken.id), exact: true }).click();
    await page.waitForURL(new RegExp(`/admin/accounts/${scenario.broken.id}$`));
    await expectText(page.locator('table.fields').first(), scenario.broken.email);
    await expectText(page.locator('[data-field="endpoint-state"]'), 'open');

    await page.getByRole('button', { name: 'Redeliver failed events' }).click();
    await page.locator('.task[data-task-status="done"]').waitFor({ timeout: 30_000 });
    await expectText(page.locator('.task'), `Done: ${scenario.brokenEvents.length} of ${scenario.brokenEvents.length} events`);
    await browser.screenshot('account');

    // An endpoint disabled after failing for ENDPOINT_DISABLE_AFTER, re-enabled from its account page.
    await updatePrimaryDestination(namespace.db, scenario.quiet.id, { disabled_at: new Date(), disabled_reason: 'every attempt failed for 5d' });
    await page.goto(consoleUrl(`/accounts/${scenario.quiet.id}`));
    await expectText(page.locator('[data-field="endpoint-state"]'), 'disabled');
    await expectText(page.locator('section', { hasText: 'Disabled because' }), 'every attempt failed for 5d');
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.locator('[data-field="endpoint-state"]', { hasText: 'closed' }).waitFor();
    await expect(page.getByRole('button', { name: 'Enable endpoint' }).count()).resolves.toBe(0);
    expect((await admin('GET', `/admin/v1/accounts/${scenario.quiet.id}`)).body.disabled_at).toBeNull();

    await page.goto(consoleUrl(`/accounts/${scenario.healthy.id}`));
    await expectText(page.locator('section', { has: page.getByRole('heading', { name: 'Bot webhooks' }) }), 'faq-bot');
  });

  it('creates an account and shows its secrets exactly once; names from users are shown as text', async () => {
    await page.goto(consoleUrl('/accounts'));
    const email = `console-new-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name').fill(XSS);
    await page.getByRole('button', { name: 'Create account' }).click();
    const secrets = page.locator('.secrets');
    await expectText(secrets, 'shown only once');
    const shown = await secrets.locator('td').allTextContents();
    const signingSecret = shown.find((value) => value.startsWith('whsec_'));
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    expect(shown.some((value) => /^[A-Za-z0-9_-]{20,}$/.test(value) && value !== signingSecret)).toBe(true);
    const row = rowsOf('').filter({ hasText: email });
    await row.waitFor();
    await expectText(row, XSS);
    await browser.screenshot('accounts');

    await row.getByRole('link').first().click();
    await expectText(page.locator('table.fields').first(), email);
    expect(await page.content()).not.toContain(signingSecret ?? 'unset');
    await page.goBack();
    await rowsOf('').filter({ hasText: email }).waitFor();
    await expect(page.locator('.secrets').count()).resolves.toBe(0);
  });

  it('shows the bot call log with filters', async () => {
    await page.getByRole('link', { name: 'Bot calls' }).click();
    await page.getByLabel('Account').fill(String(scenario.healthy.id));
    await page.getByLabel('Outcome').selectOption('ok');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/outcome=ok/);
    await waitForRows('[data-bot-call-id]', 1);
    await expectText(rowsOf(''), 'faq-bot');
    await page.getByText('request and answer').click();
    await expectText(rowsOf(''), 'Parcel leaves today');
    await browser.screenshot('bot-calls');

    await page.getByLabel('Outcome').selectOption('timeout');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No bot call matches these filters.').waitFor();
  });

  it("shows an event whose nick_name is HTML as exactly those characters and runs nothing", async () => {
    await page.goto(consoleUrl(`/events/${XSS_EVENT_ID}`));
    const message = page.getByLabel('Message', { exact: true });
    await expectText(message, `"nick_name": "${XSS}"`);
    expect(await page.locator('img').count()).toBe(0);
    await expectText(page.locator('article.attempt').first().getByLabel('Request body'), XSS);
    await page.waitForTimeout(300);
    expect(browser.dialogs).toEqual([]);
    await browser.screenshot('event-xss');
  });

  it('never put the token in a URL, sent it only as the bearer token, and broke no CSP rule', () => {
    expect(browser.requests.length).toBeGreaterThan(20);
    for (const request of browser.requests) expect(request.url).not.toContain(TOKEN);
    const apiCalls = browser.requests.filter((request) => new URL(request.url).pathname.startsWith('/admin/v1/'));
    expect(apiCalls.length).toBeGreaterThan(10);
    // Only the sign-in check of the wrong token went out with another bearer.
    expect(apiCalls.filter((request) => request.authorization !== `Bearer ${TOKEN}`).map((request) => request.authorization)).toEqual([
      'Bearer not-the-admin-token-at-all',
    ]);
    expect(browser.problems).toEqual([]);
    expect(browser.dialogs).toEqual([]);
  });
});

async function expectText(locator: ReturnType<Page['locator']>, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout: 10_000 });
}

async function waitForRows(selector: string, count: number): Promise<void> {
  await waitFor(`${count} rows matching ${selector}`, async () => (await rowsOf(selector).count()) === count, { timeoutMs: 15_000, intervalMs: 100 });
}
