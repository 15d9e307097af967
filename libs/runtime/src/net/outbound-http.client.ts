import { Agent, type Dispatcher, errors as undiciErrors, request } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { boundedLookup, guardedLookup, isPublicAddress, TargetRefusedError } from './target-guard';
import { completeUtf8Prefix } from './utf8-prefix';

export type OutboundFailureKind = 'timeout' | 'refused_target' | 'connection' | 'invalid_url';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  timeoutMs: number;
  /** The response body is read up to this many bytes; the rest is discarded. */
  maxResponseBytes: number;
  /**
   * Sends through this pool instead of the client's own, e.g. one presenting a destination's client
   * certificate (mTLS); that pool must apply the same private-address rule (guardedLookup) itself.
   */
  dispatcher?: Dispatcher;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
}

export interface OutboundHttpOptions {
  allowPrivateTargets: boolean;
  /** Keep-alive sockets per origin. */
  connectionsPerOrigin?: number;
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/**
 * POSTs to users' endpoints: keep-alive pools per origin, no redirects, one deadline covering the
 * whole exchange, a capped body read, and the private-address rule applied to the address dialled.
 */
export class OutboundHttpClient {
  private readonly agent: Agent;

  constructor(private readonly options: OutboundHttpOptions) {
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 64,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connect: { timeout: 10_000, lookup: options.allowPrivateTargets ? boundedLookup : guardedLookup },
    });
  }

  async post(outbound: OutboundRequest): Promise<OutboundResponse> {
    let target: URL;
    try {
      target = new URL(outbound.url);
    } catch {
      throw new OutboundError('invalid_url', 'the URL is not valid');
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // Sockets skip the lookup for IP literals, so those are checked here (naming the literal the user wrote reveals nothing).
    if (!this.options.allowPrivateTargets && isIP(host) && !isPublicAddress(host)) {
      throw new OutboundError('refused_target', `refused: ${host} is not a public address`);
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), outbound.timeoutMs);
    try {
      const response = await request(target, {
        method: 'POST',
        headers: outbound.headers,
        body: outbound.body,
        dispatcher: outbound.dispatcher ?? this.agent,
        signal: deadline.signal,
        headersTimeout: outbound.timeoutMs,
        bodyTimeout: outbound.timeoutMs,
      });
      const chunks: Buffer[] = [];
      let received = 0;
      let truncated = false;
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        const room = outbound.maxResponseBytes - received;
        if (buffer.length >= room) {
          chunks.push(buffer.subarray(0, room));
          received += room;
          truncated = buffer.length > room;
          break;
        }
        chunks.push(buffer);
        received += buffer.length;
      }
      if (truncated || received >= outbound.maxResponseBytes) response.body.destroy();
      const bytes = Buffer.concat(chunks);
      return {
        status: response.statusCode,
        headers: flattenHeaders(response.headers),
        body: truncated ? completeUtf8Prefix(bytes) : bytes.toString('utf8'),
        truncated,
      };
    } catch (error) {
      throw this.classify(error, deadline.signal.aborted, outbound.timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  private classify(error: unknown, timedOut: boolean, timeoutMs: number): OutboundError {
    if (error instanceof OutboundError) return error;
    if (
      timedOut ||
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      error instanceof undiciErrors.ConnectTimeoutError
    ) {
      return new OutboundError('timeout', `no answer within ${timeoutMs} ms`);
    }
    const cause = (error as { cause?: unknown }).cause;
    for (const candidate of [error, cause]) {
      if (candidate instanceof TargetRefusedError || (candidate as Error | undefined)?.name === 'TargetRefusedError') {
        return new OutboundError('refused_target', `refused: ${(candidate as Error).message}`);
      }
    }
    const code = (error as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
    const message = error instanceof Error ? error.message : String(error);
    return new OutboundError('connection', code ? `${code}: ${message}` : message);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
