/**
 * Open API v2 request signing (CONTRACT §2), written by hand: every call carries `email`, `timestamp`
 * (Unix seconds), `nonce` (new for each call), `sign_version=v2` and `sign`, the lowercase hex SHA-256 of
 * `email&open_api_token&timestamp&nonce&v2`. The query string and the body are not signed.
 */
import { createHash, randomUUID } from 'node:crypto';

export const SIGN_VERSION = 'v2';

export interface Credentials {
  email: string;
  /** The account's Open API token. */
  token: string;
}

export type SignedQuery = Record<'email' | 'timestamp' | 'nonce' | 'sign_version' | 'sign', string>;

/** `sign` for these values. */
export function openApiSign(email: string, token: string, timestamp: string | number, nonce: string): string {
  return createHash('sha256').update([email, token, String(timestamp), nonce, SIGN_VERSION].join('&'), 'utf8').digest('hex');
}

/** The five signed query parameters of one call: now and a fresh nonce unless given. */
export function signedQuery(credentials: Credentials, options: { timestamp?: number; nonce?: string } = {}): SignedQuery {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomUUID();
  return {
    email: credentials.email,
    timestamp,
    nonce,
    sign_version: SIGN_VERSION,
    sign: openApiSign(credentials.email, credentials.token, timestamp, nonce),
  };
}

/** The same request with the signed query added to its URL (a new nonce each time it is called). */
export function signRequest(request: Request, credentials: Credentials): Request {
  const url = new URL(request.url);
  for (const [name, value] of Object.entries(signedQuery(credentials))) url.searchParams.set(name, value);
  return new Request(url, request);
}
