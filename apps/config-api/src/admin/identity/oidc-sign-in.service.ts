import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type * as OpenIdClient from 'openid-client';
import { ADMIN_ROLES, type AdminRole, ENVIRONMENT, type Environment, type OidcSettings, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import { SIGN_IN_TTL_SECONDS } from './session-cookies';

/** What a sign-in under way keeps between the redirect to the issuer and the way back. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
}

export type SignInOutcome =
  | { kind: 'signed_in'; actor: string; role: AdminRole }
  | { kind: 'refused'; actor: string; status: 400 | 403; reason: string };

/** The highest role named by the claim (a string or an array of strings), or null. */
export function roleFromClaim(value: unknown): AdminRole | null {
  const named = (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
  for (const role of [...ADMIN_ROLES].reverse()) if (named.includes(role)) return role;
  return null;
}

/**
 * Single sign-on with the OIDC issuer (CONTRACT §15), through openid-client: the authorization code flow
 * with PKCE (S256), `state` and `nonce`; the ID token's signature, issuer, audience, expiry and nonce
 * are verified by the library. openid-client is an ES module, loaded on first use: only when
 * OIDC_ISSUER is set. The issuer's metadata is discovered once and kept; a failed discovery is tried
 * again on the next sign-in.
 */
@Injectable()
export class OidcSignIn {
  private client: Promise<typeof OpenIdClient> | null = null;
  private configuration: Promise<OpenIdClient.Configuration> | null = null;

  constructor(
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  get settings(): OidcSettings | null {
    return this.environment.identity.oidc;
  }

  get redirectUri(): string {
    return `${this.environment.publicUrl}/admin/callback`;
  }

  /** Starts a sign-in: answers the issuer's URL to send the browser to and the id its cookie keeps. */
  async start(): Promise<{ url: string; signInId: string }> {
    const client = await this.library();
    const configuration = await this.discovered();
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    const signInId = randomBytes(24).toString('base64url');
    await this.redis.set(this.keys.adminSignIn(signInId), JSON.stringify(pending), 'EX', SIGN_IN_TTL_SECONDS);
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, signInId };
  }

  /** Completes a sign-in from the issuer's redirect (`search`: the callback's query string). */
  async complete(signInId: string | null, search: string): Promise<SignInOutcome> {
    const settings = this.settings!;
    const text = signInId === null ? null : await this.redis.getdel(this.keys.adminSignIn(signInId));
    if (text === null) return { kind: 'refused', actor: 'unknown', status: 400, reason: 'This sign-in was not started in this browser, or took longer than ten minutes. Start again.' };
    const pending = JSON.parse(text) as PendingSignIn;
    const params = new URLSearchParams(search);
    if (params.get('state') !== pending.state) return { kind: 'refused', actor: 'unknown', status: 400, reason: 'The sign-in answer does not match the sign-in this browser started (state). Start again.' };
    if (params.has('error')) return { kind: 'refused', actor: 'unknown', status: 403, reason: `The identity provider refused the sign-in (${params.get('error')}).` };
    const client = await this.library();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(await this.discovered(), new URL(`${this.redirectUri}?${params.toString()}`), {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims() ?? {};
    } catch {
      // The library's message may quote what the issuer sent; the page and the log say only what failed.
      return { kind: 'refused', actor: 'unknown', status: 400, reason: 'The sign-in could not be completed with the identity provider (the code or the ID token was not accepted). Start again.' };
    }
    const actor = typeof claims.email === 'string' && claims.email !== '' ? claims.email : String(claims.sub);
    const role = roleFromClaim(claims[settings.rolesClaim]);
    if (role === null) {
      return { kind: 'refused', actor, status: 403, reason: `Your account has none of the roles admin, operator or viewer in the "${settings.rolesClaim}" claim of its ID token. Ask your identity provider's administrator for one.` };
    }
    return { kind: 'signed_in', actor, role };
  }

  private library(): Promise<typeof OpenIdClient> {
    this.client ??= import('openid-client');
    return this.client;
  }

  private discovered(): Promise<OpenIdClient.Configuration> {
    const settings = this.settings;
    if (!settings) throw new Error('OIDC is not configured');
    this.configuration ??= this.library()
      .then((client) => {
        const issuer = new URL(settings.issuer);
        const authentication = settings.clientSecret === null ? client.None() : client.ClientSecretBasic(settings.clientSecret);
        // Plain http only for a loopback issuer: the settings refuse it anywhere else.
        const options = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
        return client.discovery(issuer, settings.clientId, undefined, authentication, options);
      })
      .catch((error: unknown) => {
        this.configuration = null;
        throw error;
      });
    return this.configuration;
  }
}
