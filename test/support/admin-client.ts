import type { RunningApp } from './apps';
import { ADMIN_HEADERS } from './fixtures';

/** Response bodies are checked field by field, so they are typed loosely here. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One admin API call with the test run's token; the body parsed as JSON (null when empty). */
export async function adminCall(app: RunningApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${app.url}${path}`, { method, headers: ADMIN_HEADERS, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : (null as unknown as Json) };
}

async function expectRefusal(status: 400 | 422, app: RunningApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, field: string, body?: unknown): Promise<void> {
  const answer = await adminCall(app, method, path, body);
  if (answer.status !== status || !Array.isArray(answer.body?.details) || !answer.body.details.some((detail: Json) => detail.path === field)) {
    throw new Error(`${method} ${path} ${JSON.stringify(body ?? null)}: expected ${status} naming ${field}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

/** Asserts a 422 whose details name the body field `field`. */
export function expectFieldError(app: RunningApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, field: string, body?: unknown): Promise<void> {
  return expectRefusal(422, app, method, path, field, body);
}

/** Asserts a 400 whose details name `parameter`, a query parameter or a path id (CONTRACT §3). */
export function expectQueryError(app: RunningApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, parameter: string, body?: unknown): Promise<void> {
  return expectRefusal(400, app, method, path, parameter, body);
}
