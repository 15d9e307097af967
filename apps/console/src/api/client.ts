import { currentIdentity, currentToken, refusedMessage, signOut } from './session';

/** What a 400 says of one wrong field. */
export interface ErrorDetail {
  path?: string;
  problem?: string;
}

/** An admin API error answer (`{"error","message","details"?}`) or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export type QueryValues = Record<string, string | number | undefined | null>;

/** `path?a=1&b=2` with empty values left out. */
export function withQuery(path: string, query: QueryValues = {}): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') parameters.set(name, String(value));
  }
  const text = parameters.toString();
  return text ? `${path}?${text}` : path;
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: string; message?: string | string[]; details?: unknown };
    const message = Array.isArray(body.message) ? body.message.join('; ') : body.message;
    const details = Array.isArray(body.details) ? (body.details as ErrorDetail[]) : [];
    return new ApiError(response.status, body.error ?? 'error', message ?? `HTTP ${response.status}`, details);
  } catch {
    return new ApiError(response.status, 'error', `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
  }
}

/**
 * One admin API call with the tab's token as the bearer. `token` overrides it (the sign-in check);
 * without a token the single sign-on cookie goes instead, writes with its CSRF token. A 401 on a
 * signed-in call means the token or session no longer works, so the tab signs out.
 */
export async function request<T>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { query?: QueryValues; body?: unknown; token?: string; keepSignedIn?: boolean } = {},
): Promise<T> {
  const token = options.token ?? currentToken();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const csrf = currentIdentity()?.csrf_token;
  if (token === null && method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      // The session cookie only where no token is sent: a token never travels with a cookie.
      credentials: token === null ? 'same-origin' : 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(0, 'network', `the server did not answer (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && options.token === undefined && !options.keepSignedIn) signOut(refusedMessage);
    throw error;
  }
  // A 204 (a destination deleted) has no body to read.
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export const get = <T>(path: string, query?: QueryValues): Promise<T> => request<T>('GET', path, { query });
export const post = <T>(path: string, body: unknown = {}): Promise<T> => request<T>('POST', path, { body });
export const put = <T>(path: string, body: unknown): Promise<T> => request<T>('PUT', path, { body });
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);
