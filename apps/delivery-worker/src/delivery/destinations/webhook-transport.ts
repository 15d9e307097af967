import { OutboundError, type OutboundHttpClient, type OutboundResponse } from '@app/runtime';
import type { Agent } from 'undici';
import { USER_AGENT } from './user-agent';
import type { ClientCertificateAgents } from './client-certificate-agents';
import type { DestinationTarget, DestinationTransport, OutgoingDelivery, TransportOutcome } from './destination-transport';
import type { OAuth2TokenCache } from './oauth2-token-cache';
import { capHeaders, elapsedMs, failed, httpFailureText, MAX_STORED_RESPONSE_BYTES, parseRetryAfter, redactCredentials } from './transport-outcome';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'trailers', 'transfer-encoding', 'upgrade']);
/** Headers the request's framing and signature depend on: an auth header must not replace them. */
const FRAMING = new Set(['host', 'content-length', 'content-type']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Why an `auth.header` name cannot be sent, or null. config-api refuses such names when the destination
 * is saved; this second check keeps a row written any other way from overriding the signature headers.
 */
export function authHeaderNameProblem(name: string): string | null {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return 'auth.name is not a valid header name';
  if (lower.startsWith('webhook-')) return `auth.name ${lower} is one of the webhook-* signature headers`;
  if (HOP_BY_HOP.has(lower)) return `auth.name ${lower} is a hop-by-hop header`;
  if (FRAMING.has(lower)) return `auth.name ${lower} is set by the service`;
  return null;
}

/** A time-out names the attempt's whole deadline: the HTTP call only had what the token lookup left of it. */
function reasonOfOutboundError(error: OutboundError, deadlineMs: number): string {
  if (error.kind === 'timeout') return `time-out: no answer within ${deadlineMs} ms`;
  if (error.kind === 'connection') return `connection failed: ${error.message}`;
  if (error.kind === 'invalid_url') return `invalid target: ${error.message}`;
  return error.message;
}

/**
 * POSTs a webhook destination's delivery (CONTRACT §11 `webhook`) through the worker's outbound HTTP
 * client (private-address rule, no redirects, one deadline, capped body), adding the destination's auth:
 * a header, an OAuth2 bearer token (asked within the same deadline), or a client certificate.
 */
export class WebhookTransport implements DestinationTransport {
  constructor(
    private readonly http: Pick<OutboundHttpClient, 'post'>,
    private readonly tokens: OAuth2TokenCache,
    private readonly certificates: ClientCertificateAgents,
  ) {}

  async send(target: DestinationTarget, delivery: OutgoingDelivery, timeoutMs: number): Promise<TransportOutcome> {
    const startedAt = performance.now();
    const headers: Record<string, string> = { 'content-type': delivery.contentType, 'user-agent': USER_AGENT, ...delivery.signatureHeaders, ...delivery.extraHeaders };
    const auth = target.auth;
    let dispatcher: Agent | undefined;
    let usedToken: string | null = null;
    const credentials: string[] = [];
    if (auth?.type === 'header') {
      const problem = authHeaderNameProblem(auth.name);
      if (problem) return failed(startedAt, problem);
      if (/[\r\n\0]/.test(auth.value)) return failed(startedAt, 'auth.value holds a line break or NUL');
      headers[auth.name.toLowerCase()] = auth.value;
      credentials.push(auth.value);
    } else if (auth?.type === 'oauth2') {
      const lookup = await this.tokens.token(target.id, auth, timeoutMs);
      if (!lookup.ok) return failed(startedAt, redactCredentials(lookup.reason, [auth.client_secret]));
      headers.authorization = `Bearer ${lookup.token}`;
      usedToken = lookup.stored;
      credentials.push(lookup.token, auth.client_secret);
    } else if (auth?.type === 'mtls') {
      const lookup = this.certificates.agentFor(target.id, auth);
      if (!lookup.ok) return failed(startedAt, lookup.reason);
      dispatcher = lookup.agent;
    }

    let response: OutboundResponse;
    try {
      response = await this.http.post({
        url: target.url,
        headers,
        body: delivery.body,
        timeoutMs: Math.max(1, timeoutMs - elapsedMs(startedAt)),
        maxResponseBytes: MAX_STORED_RESPONSE_BYTES,
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (error) {
      const reason = error instanceof OutboundError ? reasonOfOutboundError(error, timeoutMs) : 'connection failed: the request could not be made';
      return failed(startedAt, redactCredentials(reason, credentials), { failure: error instanceof OutboundError ? error.kind : 'connection' });
    }
    const answer = { status: response.status, responseBody: response.body, responseHeaders: capHeaders(response.headers) };
    if (response.status >= 200 && response.status < 300) return { ok: true, durationMs: elapsedMs(startedAt), ...answer };
    if (response.status === 401 && usedToken !== null && auth?.type === 'oauth2') {
      await this.tokens.invalidate(target.id, usedToken).catch(() => undefined);
      return failed(startedAt, 'HTTP 401: unauthorized (the OAuth2 token is dropped; the next attempt asks token_url for a new one)', answer);
    }
    const retryAfterMs = response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers['retry-after'], Date.now()) : null;
    return failed(startedAt, httpFailureText(response.status), { ...answer, ...(retryAfterMs === null ? {} : { retryAfterMs }) });
  }
}
