/**
 * Standard Webhooks, written by hand: what a receiver checks on each callback, and what the command
 * line signs forwarded events with. `webhook-signature` is `v1,<base64 HMAC-SHA256>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64-decoded part of the secret after
 * `whsec_`; several signatures may be space separated (during a secret rotation).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** Five minutes either way, as Standard Webhooks recommends. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Node's `request.headers`, a fetch `Headers`, or any record of header values. */
export type WebhookHeaderSource = Headers | Record<string, string | string[] | undefined>;

/** A type, not an interface, so what signWebhook answers can be passed straight to verifyWebhook. */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('the signing secret is empty');
  return key;
}

function mac(secret: string, id: string, timestamp: string, body: string | Uint8Array): Buffer {
  const hmac = createHmac('sha256', keyOf(secret));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(body);
  return hmac.digest();
}

/** One `v1,<base64>` signature. */
export function webhookSignature(secret: string, id: string, timestamp: number | string, body: string | Uint8Array): string {
  return `v1,${mac(secret, id, String(timestamp), body).toString('base64')}`;
}

/** The three headers a callback carries for exactly these body bytes. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Uint8Array): WebhookHeaders {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secret, id, timestamp, body) };
}

function header(headers: WebhookHeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && !(name in headers)) return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a callback: throws WebhookVerificationError when a header is missing, the timestamp is more
 * than `toleranceSeconds` from now, or no `v1` signature matches the secret. Comparisons are constant
 * time. `body` must be the raw bytes received (not re-serialized JSON).
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaderSource,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: Date } = {},
): void {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^[0-9]{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('webhook-timestamp is too old or too far in the future');
  }
  const expected = mac(secret, id, timestamp, body);
  let matched = false;
  for (const candidate of signatures.split(' ')) {
    const [version, encoded] = candidate.split(',', 2);
    if (version !== 'v1' || !encoded) continue;
    const presented = Buffer.from(encoded, 'base64');
    // Every candidate is compared in full, so the time taken does not tell which one matched.
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no webhook-signature matches the secret');
}
