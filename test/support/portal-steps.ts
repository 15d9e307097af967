import type { Page } from 'playwright-core';
import type { RunningApp } from './apps';
import type { TestAccount } from './fixtures';
import { adminPortalLink } from './portal-client';

/** Links are built on PUBLIC_URL (its default names port 3000); the test's config-api listens elsewhere. */
export function onTestServer(configApi: RunningApp, url: string): string {
  const parsed = new URL(url);
  return `${configApi.url}${parsed.pathname}${parsed.hash}`;
}

/** Opens the account's portal with a fresh admin link, on its Endpoint page; answers the link as issued. */
export async function openPortal(page: Page, configApi: RunningApp, account: TestAccount): Promise<string> {
  const link = await adminPortalLink(configApi, account.id);
  await page.goto(onTestServer(configApi, link.url));
  await page.getByRole('heading', { name: 'Endpoint' }).waitFor();
  return link.url;
}

/** Opens the account's portal and goes to its Destinations page. */
export async function openPortalDestinations(page: Page, configApi: RunningApp, account: TestAccount): Promise<void> {
  await openPortal(page, configApi, account);
  await page.getByRole('link', { name: 'Destinations', exact: true }).click();
  await page.getByRole('heading', { name: 'Destinations', level: 1 }).waitFor();
}
