import { createHash, randomUUID } from 'node:crypto';
import { loggableErrorText, OutboundError, type OutboundHttpClient, type RedisClient, type SecretBox } from '@app/runtime';
import type { DestinationAuth } from './destination-transport';

type OAuth2Auth = Extract<DestinationAuth, { type: 'oauth2' }>;

export type TokenLookup = { ok: true; token: string; stored: string } | { ok: false; reason: string };

/** A token is dropped this long before `expires_in` ends (a tenth of a short lifetime), so none is sent as it expires. */
const REFRESH_MARGIN_MS = 60_000;
/** `expires_in` is only RECOMMENDED (RFC 6749 §5.1): without it a token is reused this long (a 401 still drops it sooner). */
const LIFETIME_WITHOUT_EXPIRES_IN_MS = 300_000;
/** How often a worker waiting on another worker's token request looks for its result. */
const WAIT_STEP_MS = 25;

const DELETE_IF_EQUAL = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

interface CachedToken {
  token: string;
  /** Which auth settings the token was asked with: an edited client secret or scope must not reuse it. */
  settings: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

/** RFC 6749 §2.3.1 / Appendix B: client id and secret are form-encoded, then joined for HTTP Basic. */
function basicCredentials(auth: OAuth2Auth): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  return Buffer.from(`${encode(auth.client_id)}:${encode(auth.client_secret)}`).toString('base64');
}

/**
 * OAuth 2.0 client-credentials tokens of webhook destinations, shared by every worker through Redis
 * (CONTRACT §11): one token request per token lifetime and destination, whatever the number of workers.
 * The stored token is sealed with SecretBox, as it opens the user's endpoint; keys hold only the
 * destination id. A Redis lock makes one worker ask while the others wait for its answer.
 */
export class OAuth2TokenCache {
  private readonly asking = new Map<string, Promise<TokenLookup>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    private readonly secretBox: SecretBox,
    private readonly http: Pick<OutboundHttpClient, 'post'>,
  ) {}

  private key(destinationId: string, kind: 'token' | 'lock'): string {
    return `${this.keyPrefix}:destination-oauth2:{${destinationId}}:${kind}`;
  }

  /** A token for this destination: the cached one, or one asked of `token_url` now (by this worker or another). */
  async token(destinationId: string, auth: OAuth2Auth, timeoutMs: number): Promise<TokenLookup> {
    const settings = createHash('sha256').update(JSON.stringify([auth.token_url, auth.client_id, auth.client_secret, auth.scope ?? null])).digest('base64url');
    const flight = `${destinationId}\n${settings}`;
    let lookup = this.asking.get(flight);
    if (!lookup) {
      lookup = this.lookUp(destinationId, auth, settings, timeoutMs)
        // Without Redis no worker could share a token: the attempt fails (and is retried) rather than every send asking token_url.
        .catch((error: unknown): TokenLookup => ({ ok: false, reason: `oauth2 token cache unavailable: ${loggableErrorText(error)}` }))
        .finally(() => this.asking.delete(flight));
      this.asking.set(flight, lookup);
    }
    return lookup;
  }

  /** After a 401: the token is dropped unless another worker already replaced it. */
  async invalidate(destinationId: string, stored: string): Promise<void> {
    await this.redis.eval(DELETE_IF_EQUAL, 1, this.key(destinationId, 'token'), stored);
  }

  private async cached(destinationId: string, settings: string): Promise<TokenLookup | null> {
    const stored = await this.redis.get(this.key(destinationId, 'token'));
    if (!stored) return null;
    try {
      const cached = JSON.parse(this.secretBox.open(stored)) as CachedToken;
      return cached.settings === settings ? { ok: true, token: cached.token, stored } : null;
    } catch {
      return null; // sealed with a key no longer known: ask again
    }
  }

  private async lookUp(destinationId: string, auth: OAuth2Auth, settings: string, timeoutMs: number): Promise<TokenLookup> {
    const deadline = Date.now() + timeoutMs;
    const lockKey = this.key(destinationId, 'lock');
    for (;;) {
      const hit = await this.cached(destinationId, settings);
      if (hit) return hit;
      const lockId = randomUUID();
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { ok: false, reason: `token endpoint ${hostOf(auth.token_url)}: no token within ${timeoutMs} ms` };
      if ((await this.redis.set(lockKey, lockId, 'PX', remaining + 1000, 'NX')) === 'OK') {
        try {
          // Another worker may have stored one between the look and the lock.
          return (await this.cached(destinationId, settings)) ?? (await this.fetch(destinationId, auth, settings, remaining, timeoutMs));
        } finally {
          await this.redis.eval(DELETE_IF_EQUAL, 1, lockKey, lockId);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  private async fetch(destinationId: string, auth: OAuth2Auth, settings: string, remainingMs: number, timeoutMs: number): Promise<TokenLookup> {
    const named = `token endpoint ${hostOf(auth.token_url)}`;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope) form.set('scope', auth.scope);
    let status: number;
    let body: string;
    try {
      const response = await this.http.post({
        url: auth.token_url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basicCredentials(auth)}` },
        body: form.toString(),
        timeoutMs: remainingMs,
        maxResponseBytes: 16_384,
      });
      status = response.status;
      body = response.body;
    } catch (error) {
      if (error instanceof OutboundError && error.kind === 'timeout') return { ok: false, reason: `${named}: no answer within ${timeoutMs} ms` };
      const why = error instanceof OutboundError ? error.message : 'the request failed';
      return { ok: false, reason: `${named}: ${why}` };
    }
    let answer: { access_token?: unknown; expires_in?: unknown; error?: unknown; token_type?: unknown } = {};
    try {
      answer = JSON.parse(body) as typeof answer;
    } catch {
      // reported below by what is missing
    }
    // Only the RFC 6749 §5.2 error code is quoted: a token endpoint's free text may echo what it was sent.
    const errorCode = typeof answer?.error === 'string' && /^[\w.-]{1,64}$/.test(answer.error) ? ` (${answer.error})` : '';
    if (status < 200 || status >= 300) return { ok: false, reason: `${named} answered HTTP ${status}${errorCode}` };
    if (typeof answer?.access_token !== 'string' || answer.access_token === '') return { ok: false, reason: `${named} answered without an access_token` };
    if (typeof answer.token_type === 'string' && answer.token_type.toLowerCase() !== 'bearer') {
      return { ok: false, reason: `${named} answered token_type ${answer.token_type.slice(0, 32)}, not Bearer` };
    }
    const lifetimeMs = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : LIFETIME_WITHOUT_EXPIRES_IN_MS;
    const reuseMs = Math.floor(lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10));
    const stored = this.secretBox.seal(JSON.stringify({ token: answer.access_token, settings } satisfies CachedToken));
    if (reuseMs >= 1000) await this.redis.set(this.key(destinationId, 'token'), stored, 'PX', reuseMs);
    return { ok: true, token: answer.access_token, stored };
  }
}
