import { loggableErrorText } from '@app/runtime';
import type { TransportOutcome } from './destination-transport';

/** Where transports write what an operator should know (a dropped broker connection); never a credential. */
export interface TransportLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** Milliseconds since a `performance.now()` reading, rounded like the primary's attempt durations. */
export function elapsedMs(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

/**
 * A failure's text with every credential the transport knows of replaced by `***`: client libraries
 * sometimes quote the URL or the value they were given, and a reason reaches the attempt log API users
 * read. Short values are left alone (masking "a" would mangle the whole text and hide nothing).
 */
export function redactCredentials(text: string, credentials: readonly (string | undefined)[]): string {
  let redacted = text;
  for (const credential of credentials) {
    if (credential && credential.length >= 3) redacted = redacted.split(credential).join('***');
  }
  return redacted;
}

/** An error as reason text: loggable (no database values), credentials masked, one line, bounded. */
export function reasonOf(error: unknown, credentials: readonly (string | undefined)[]): string {
  return redactCredentials(loggableErrorText(error), credentials).replace(/\s+/g, ' ').slice(0, 500);
}

export function failed(startedAt: number, reason: string, extra: Partial<Extract<TransportOutcome, { ok: false }>> = {}): TransportOutcome {
  return { ok: false, durationMs: elapsedMs(startedAt), reason, ...extra };
}

/** Runs `work` but answers `onTimeout()` once `timeoutMs` passes; the late work's result or error is dropped. */
export async function withinDeadline<T>(work: Promise<T>, timeoutMs: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), Math.max(1, timeoutMs));
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Response bodies and header maps are stored up to this many bytes (CONTRACT §3). */
export const MAX_STORED_RESPONSE_BYTES = 4096;

/** Keeps response headers in order until their JSON reaches the storage cap. */
export function capHeaders(headers: Record<string, string>, maxBytes = MAX_STORED_RESPONSE_BYTES): Record<string, string> {
  const kept: Record<string, string> = {};
  let size = 2;
  for (const [name, value] of Object.entries(headers)) {
    const entry = Buffer.byteLength(JSON.stringify(name) + JSON.stringify(value)) + 2;
    if (size + entry > maxBytes) break;
    kept[name] = value;
    size += entry;
  }
  return kept;
}

/** Parses Retry-After: delta-seconds or an HTTP-date. Returns milliseconds from `nowMs` (never negative), or null. */
export function parseRetryAfter(value: string | undefined | null, nowMs: number): number | null {
  if (value === undefined || value === null) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the HTTP-date forms (IMF-fixdate and the two obsolete ones) name a weekday or "GMT";
  // Date.parse alone would also accept bare numbers like "1.5".
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

function httpReason(status: number): string {
  if (status >= 300 && status < 400) return 'redirect not followed';
  if (status === 401) return 'unauthorized';
  if (status === 408) return 'request time-out';
  if (status === 429) return 'too many requests';
  if (status >= 500) return 'server error';
  return 'rejected';
}

/** An answer that is not a success, as attempts and last_error say it: `HTTP 503: server error`. */
export function httpFailureText(status: number): string {
  return `HTTP ${status}: ${httpReason(status)}`;
}
