import { callbackTraceHeaders, OutboundError, type OutboundHttpClient, workerStageStamps } from '@app/runtime';
import { type AccountDeliverySettings, signingSecretsAt } from '../account-settings.cache';
import { type CallbackBody, callbackHeaders } from './callback-request';
import type { PendingEvent } from '../loading/event-loader';
import type { AttemptResult } from '../outcome/retry-policy';
import { WorkerStoppingError } from '../worker-stopping-error';

/** Response bodies and header maps are stored up to this many bytes (CONTRACT §3). */
export const MAX_STORED_RESPONSE_BYTES = 4096;

/** The provider token of the worker's outbound HTTP client (one keep-alive pool per origin). */
export const DELIVERY_HTTP_CLIENT = Symbol('DELIVERY_HTTP_CLIENT');

/** What an abandoned call records: the receiver may or may not have seen it, so it is retried (same webhook-id). */
export const ABANDONED_MESSAGE = 'abandoned: the worker shut down before the receiver answered';

/** One HTTP exchange as it happened. */
export interface Exchange {
  startedAt: Date;
  headers: Record<string, string>;
  durationMs: number;
  result: AttemptResult;
  responseBody: string | null;
  /** The worker stopped waiting for the answer (shutdown); says nothing about the endpoint. */
  abandoned: boolean;
}

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

/**
 * Signs for this moment and POSTs; every failure comes back as a result, never as an exception. At
 * shutdown `abandon()` ends the calls still waiting for an answer at once, so the worker can record
 * them (as failed attempts, retried per schedule) and exit without waiting out DELIVERY_TIMEOUT_MS.
 */
/** The callback could not be signed (e.g. an unreadable signing secret): no call can ever be made for it. */
export class UnsignableCallbackError extends Error {
  constructor(cause: unknown) {
    super(`cannot sign the callback: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

export class CallbackSender {
  private readonly waiting = new Set<() => void>();
  private abandoned = false;

  constructor(
    private readonly http: Pick<OutboundHttpClient, 'post'>,
    private readonly timeoutMs: number,
  ) {}

  get inFlight(): number {
    return this.waiting.size;
  }

  abandon(): void {
    this.abandoned = true;
    for (const stop of [...this.waiting]) stop();
  }

  async send(event: PendingEvent, settings: AccountDeliverySettings, callback: CallbackBody): Promise<Exchange> {
    const startedAt = new Date();
    if (this.abandoned) throw new WorkerStoppingError();
    let headers: Record<string, string>;
    try {
      headers = callbackHeaders(callback, {
        id: event.eventId,
        timestampSeconds: Math.floor(startedAt.getTime() / 1000),
        secrets: signingSecretsAt(settings, startedAt.getTime()),
      });
      Object.assign(headers, callbackTraceHeaders());
    } catch (error) {
      throw new UnsignableCallbackError(error);
    }
    workerStageStamps.callStarted(event.seq);
    const started = performance.now();
    const finished = (result: AttemptResult, responseBody: string | null, abandoned = false): Exchange => ({
      startedAt,
      headers,
      durationMs: Math.round(performance.now() - started),
      result,
      responseBody,
      abandoned,
    });

    let stop: () => void = () => undefined;
    const abandonedCall = new Promise<null>((resolve) => {
      stop = () => resolve(null);
    });
    this.waiting.add(stop);
    const call = this.http.post({
      url: settings.pushUrl ?? '',
      headers,
      body: callback.body,
      timeoutMs: this.timeoutMs,
      maxResponseBytes: MAX_STORED_RESPONSE_BYTES,
    });
    try {
      const response = await Promise.race([call, abandonedCall]);
      if (response === null) {
        // The request itself ends with its own deadline or when the process exits.
        call.catch(() => undefined);
        return finished({ kind: 'error', failure: 'connection', message: ABANDONED_MESSAGE }, null, true);
      }
      return finished({ kind: 'response', status: response.status, headers: response.headers }, response.body);
    } catch (error) {
      return finished(
        error instanceof OutboundError
          ? { kind: 'error', failure: error.kind, message: error.message }
          : { kind: 'error', failure: 'connection', message: error instanceof Error ? error.message : String(error) },
        null,
      );
    } finally {
      this.waiting.delete(stop);
      workerStageStamps.answered(event.seq);
    }
  }
}
