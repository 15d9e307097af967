import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual, unixSeconds, withinTolerance } from './digest';

const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks asks for 24 to 64). */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A URL-safe random token, e.g. the Open API token. */
export function generateToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export function signingKeyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** One `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>` (Standard Webhooks). */
export function webhookSignature(secret: string, webhookId: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac('sha256', signingKeyOf(secret));
  mac.update(`${webhookId}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers for exactly these body bytes. With several secrets (during a
 * rotation) the signatures are space separated, so receivers holding either secret can verify.
 */
export function signWebhook(secrets: readonly string[], webhookId: string, timestamp: number, body: string | Buffer): WebhookHeaders {
  if (secrets.length === 0) throw new Error('at least one signing secret is required');
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => webhookSignature(secret, webhookId, timestamp, body)).join(' '),
  };
}

export type WebhookVerifyResult = { ok: true } | { ok: false; reason: string };

/** The receiving side: checks the timestamp window and that some `v1` signature matches the secret. */
export function verifyWebhook(
  headers: Record<string, string | string[] | undefined>,
  body: string | Buffer,
  secret: string,
  options: { toleranceSeconds?: number; now?: Date } = {},
): WebhookVerifyResult {
  const header = (name: string): string | undefined => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestampText = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestampText || !signatures) return { ok: false, reason: 'missing webhook headers' };
  if (!/^\d+$/.test(timestampText)) return { ok: false, reason: 'webhook-timestamp is not an integer' };
  const timestamp = Number(timestampText);
  if (!withinTolerance(timestamp, unixSeconds(options.now), options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'webhook-timestamp is outside the tolerance window' };
  }
  const expected = webhookSignature(secret, id, timestamp, body);
  const matched = signatures
    .split(' ')
    .filter((candidate) => candidate.startsWith('v1,'))
    .some((candidate) => safeEqual(candidate, expected));
  return matched ? { ok: true } : { ok: false, reason: 'no signature matches' };
}
