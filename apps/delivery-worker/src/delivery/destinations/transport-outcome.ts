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
