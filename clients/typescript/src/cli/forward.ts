/** Forwarding one event to the local receiver as the service's callbacks are sent, with the retries. */
import { signWebhook } from '../webhooks.js';
import type { FeedItem } from './feed.js';

/** Waits before the 2nd, 3rd and 4th attempt. */
export const RETRY_DELAYS_MS = [1000, 2000, 5000] as const;
const ATTEMPT_TIMEOUT_MS = 10_000;

export interface Attempt {
  /** The receiver's status, or why there was none (`connection refused`, `timed out`, …). */
  outcome: number | string;
  ms: number;
  ok: boolean;
}

export interface ForwardOptions {
  forward: URL;
  secret?: string;
  /** Called after each attempt with the wait before the next one (undefined: none follows). */
  report(item: FeedItem, attempt: Attempt, retryInMs: number | undefined): void;
  sleep(ms: number): Promise<void>;
  signal?: AbortSignal;
}

function failure(error: unknown): string {
  const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'ENOTFOUND') return 'host not found';
  if ((error as Error).name === 'TimeoutError') return 'timed out';
  return code ?? (error as Error).message;
}

/** One POST of the event: `{"action","message"}` with the webhook-* headers, signed when a secret is given. */
export async function sendOnce(item: FeedItem, options: Pick<ForwardOptions, 'forward' | 'secret' | 'signal'>): Promise<Attempt> {
  const body = JSON.stringify({ action: item.action, message: item.message });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'event-callbacks-cli',
    'webhook-id': item.event_id,
    'webhook-timestamp': String(timestamp),
  };
  if (options.secret) headers['webhook-signature'] = signWebhook(options.secret, item.event_id, timestamp, body)['webhook-signature'];
  const started = performance.now();
  const signals = [AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), ...(options.signal ? [options.signal] : [])];
  try {
    const response = await fetch(options.forward, { method: 'POST', headers, body, signal: AbortSignal.any(signals), redirect: 'manual' });
    await response.arrayBuffer().catch(() => undefined);
    return { outcome: response.status, ms: Math.round(performance.now() - started), ok: response.status >= 200 && response.status < 300 };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return { outcome: failure(error), ms: Math.round(performance.now() - started), ok: false };
  }
}

/** Up to four attempts (now, then after 1 s, 2 s and 5 s); true when one was answered 2xx. */
export async function forwardEvent(item: FeedItem, options: ForwardOptions): Promise<boolean> {
  for (let attempt = 0; ; attempt += 1) {
    const result = await sendOnce(item, options);
    const retryInMs = result.ok ? undefined : RETRY_DELAYS_MS[attempt];
    options.report(item, result, retryInMs);
    if (result.ok) return true;
    if (retryInMs === undefined) return false;
    await options.sleep(retryInMs);
  }
}
