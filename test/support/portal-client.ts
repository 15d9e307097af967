import type { RunningApp } from './apps';
import { ADMIN_HEADERS } from './fixtures';

export interface PortalAnswer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A portal link for the account through the admin API, and the code in its fragment. */
export async function adminPortalLink(configApi: RunningApp, accountId: number, ttl?: string): Promise<{ url: string; code: string; expires_at: string }> {
  const response = await fetch(`${configApi.url}/admin/v1/accounts/${accountId}/portal-link`, {
    method: 'POST',
    headers: ADMIN_HEADERS,
    body: JSON.stringify(ttl === undefined ? {} : { ttl }),
  });
  if (response.status !== 201) throw new Error(`portal-link answered ${response.status}: ${await response.text()}`);
  const link = (await response.json()) as { url: string; expires_at: string };
  return { ...link, code: new URL(link.url).hash.slice(1) };
}

export async function openPortalSession(configApi: RunningApp, code: string): Promise<PortalAnswer> {
  const response = await fetch(`${configApi.url}/portal/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  return { status: response.status, body: (await response.json()) as PortalAnswer['body'] };
}

/** A session token for the account, through a fresh admin link. */
export async function portalToken(configApi: RunningApp, accountId: number): Promise<string> {
  const { code } = await adminPortalLink(configApi, accountId);
  const session = await openPortalSession(configApi, code);
  if (session.status !== 201) throw new Error(`session answered ${session.status}: ${JSON.stringify(session.body)}`);
  return session.body.token as string;
}

/** One /portal/v1 call; `authorization` null sends no header. */
export async function portalCall(
  configApi: RunningApp,
  authorization: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<PortalAnswer> {
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (authorization !== null) headers.authorization = authorization;
  const response = await fetch(`${configApi.url}/portal/v1/${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as PortalAnswer['body']) };
}
