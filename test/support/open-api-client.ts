import { randomUUID } from 'node:crypto';
import { openApiSign } from '@app/signing';
import type { RunningApp } from './apps';
import type { Json } from './admin-client';
import type { TestAccount } from './fixtures';

export interface OpenApiAnswer<T = Record<string, unknown>> {
  status: number;
  body: T & { code: number; message: string; exception?: { message: string } };
}

/** The five signed query parameters of CONTRACT §2 for this account, fresh nonce and timestamp. */
export function signedQuery(account: Pick<TestAccount, 'email' | 'open_api_token'>): URLSearchParams {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  const sign = openApiSign({ email: account.email, openApiToken: account.open_api_token, timestamp, nonce });
  return new URLSearchParams({ email: account.email, timestamp, nonce, sign_version: 'v2', sign });
}

/**
 * One correctly signed Open API call (CONTRACT §2): GET without a body, POST with one (a string is sent
 * as it is, anything else as JSON).
 */
export async function signedOpenApiCall(
  app: RunningApp | { url: string },
  account: Pick<TestAccount, 'email' | 'open_api_token'>,
  operation: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Json }> {
  const init: RequestInit =
    body === undefined
      ? { method: 'GET' }
      : { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) };
  const response = await fetch(`${app.url}/open_api_v1/${operation}?${signedQuery(account).toString()}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : (null as unknown as Json) };
}

/** One correctly signed Open API call; `query` adds operation parameters (e.g. the feed's after/limit). */
export async function openApiCall<T = Record<string, unknown>>(
  baseUrl: string,
  account: Pick<TestAccount, 'email' | 'open_api_token'>,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  operation: string,
  { body, query = {} }: { body?: unknown; query?: Record<string, string> } = {},
): Promise<OpenApiAnswer<T>> {
  const params = signedQuery(account);
  for (const [name, value] of Object.entries(query)) params.set(name, value);
  const response = await fetch(`${baseUrl}/open_api_v1/${operation}?${params.toString()}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as OpenApiAnswer<T>['body'] };
}

/**
 * fetch from another loopback address (127.0.0.2, …), which fetch cannot choose: the failed-authentication
 * limit is per client address. Answers a standard Response.
 */
export async function fetchFrom(localAddress: string, url: string, init: RequestInit = {}): Promise<Response> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: init.method ?? 'GET', headers: init.headers as Record<string, string> | undefined, localAddress }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: incoming.statusCode ?? 0 })));
    });
    outgoing.on('error', reject);
    outgoing.end(typeof init.body === 'string' ? init.body : undefined);
  });
}
