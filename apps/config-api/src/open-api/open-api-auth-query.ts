import { OPEN_API_SIGN_VERSION } from '@app/signing';
import { authFailed, badTimestamp, missingNonce } from './open-api-errors';

/** Longer nonces are 20624 (CONTRACT §2); what is remembered of a nonce is its digest, whatever its length. */
export const MAX_NONCE_LENGTH = 128;

export interface OpenApiAuthQuery {
  email: string;
  /** Exactly as sent: the signature covers the text, not the number. */
  timestampText: string;
  timestamp: number;
  nonce: string;
  sign: string;
}

/** Repeated query parameters arrive as arrays; anything but one plain string counts as absent. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks what can be judged from the query alone, before any database or Redis work, in this order:
 * sign_version (2059), timestamp format (20621), nonce presence (20624), email and sign presence (2059).
 */
export function parseAuthQuery(query: Record<string, unknown>): OpenApiAuthQuery {
  const signVersion = single(query, 'sign_version');
  if (signVersion !== OPEN_API_SIGN_VERSION) {
    throw authFailed(signVersion === undefined ? 'sign_version is missing; it must be v2' : 'sign_version must be v2');
  }

  const timestampText = single(query, 'timestamp');
  if (timestampText === undefined || timestampText === '') throw badTimestamp('timestamp is missing');
  if (!/^-?\d{1,15}$/.test(timestampText)) throw badTimestamp('timestamp must be an integer number of Unix seconds');

  const nonce = single(query, 'nonce');
  if (nonce === undefined || nonce === '') throw missingNonce('nonce is missing or empty');
  if (nonce.length > MAX_NONCE_LENGTH) throw missingNonce(`nonce must be at most ${MAX_NONCE_LENGTH} characters long`);

  const email = single(query, 'email');
  if (email === undefined || email === '') throw authFailed('email is missing');
  const sign = single(query, 'sign');
  if (sign === undefined || sign === '') throw authFailed('sign is missing');

  return { email, timestampText, timestamp: Number(timestampText), nonce, sign };
}
