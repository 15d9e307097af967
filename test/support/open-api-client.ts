import { openApiQuery } from '@app/signing';
import type { RunningApp } from './apps';
import type { Json } from './admin-client';
import type { TestAccount } from './fixtures';

/** One signed Open API call (a fresh nonce each time); a GET without a body, a JSON POST with one. */
export async function openApiCall(app: RunningApp | { url: string }, account: TestAccount, operation: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const query = new URLSearchParams(openApiQuery({ email: account.email, openApiToken: account.open_api_token })).toString();
  const init: RequestInit =
    body === undefined ? { method: 'GET' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const response = await fetch(`${app.url}/open_api_v1/${operation}?${query}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}
