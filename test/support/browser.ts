import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from './apps';
import { ensureConsoleBuilt } from './console-build';

/** Debian's chromium package (CI installs it with `apt-get install -y chromium`). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(__dirname, '..', '..', 'test-artifacts', 'console');

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested, in order. */
  requests: { url: string; authorization: string | undefined }[];
  /** Every alert/confirm/prompt the page opened (the XSS check expects none). */
  dialogs: string[];
  /** Console messages about refused content (CSP) and uncaught page errors. */
  problems: string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile of its own, recording what the page requests and opens. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`The console browser test needs Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'console-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: TestBrowser['requests'] = [];
  const dialogs: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push({ url: request.url(), authorization: request.headers().authorization }));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    requests,
    dialogs,
    problems,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens the console at `baseUrl` and signs in with the admin token (the run's, unless given). */
export async function signIntoConsole(page: Page, baseUrl: string, token = process.env.ADMIN_TOKEN ?? ''): Promise<void> {
  await page.goto(`${baseUrl}/admin`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Overview' }).waitFor();
}

export interface SignedInConsole {
  /** The config-api serving the built console. */
  readonly configApi: RunningApp;
  readonly browser: TestBrowser;
  readonly page: Page;
}

/**
 * For the calling file: builds the console if needed, starts config-api, opens Chromium and signs in
 * with the run's admin token before the tests; closes both after them. Its fields are there from the
 * first test on.
 */
export function useSignedInConsole(): SignedInConsole {
  return useConsoleBrowser(true);
}

/** The same without signing in: for the account portal, which a portal link opens. */
export function usePortalBrowser(): SignedInConsole {
  return useConsoleBrowser(false);
}

function useConsoleBrowser(signIn: boolean): SignedInConsole {
  let configApi: RunningApp | undefined;
  let browser: TestBrowser | undefined;
  beforeAll(async () => {
    await ensureConsoleBuilt();
    configApi = await startApp(ConfigApiModule);
    browser = await launchBrowser();
    if (signIn) await signIntoConsole(browser.page, configApi.url);
  });
  afterAll(async () => {
    await browser?.close();
    await configApi?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the signed-in console is there from the first test on, not before');
    return value;
  };
  return {
    get configApi() {
      return ready(configApi);
    },
    get browser() {
      return ready(browser);
    },
    get page() {
      return ready(browser).page;
    },
  };
}
