import { randomUUID } from 'node:crypto';
import { openApiSign } from '@app/signing';
import type { RunningApp } from './apps';
import type { Json } from './admin-client';
import type { TestAccount } from './fixtures';

/**
 * One correctly signed Open API call (CONTRACT §2): GET without a body, POST with one (a string is sent
 * as it is, anything else as JSON).
 */
export async function signedOpenApiCall(
  app: RunningApp,
  account: TestAccount,
  operation: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Json }> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  const sign = openApiSign({ email: account.email, openApiToken: account.open_api_token, timestamp, nonce });
  const query = new URLSearchParams({ email: account.email, timestamp, nonce, sign_version: 'v2', sign });
  const init: RequestInit =
    body === undefined
      ? { method: 'GET' }
      : { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) };
  const response = await fetch(`${app.url}/open_api_v1/${operation}?${query.toString()}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : (null as unknown as Json) };
}
