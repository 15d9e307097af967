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
