import {
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import type Redis from 'ioredis';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Account } from '@app/persistence';
import { ENVIRONMENT, type Environment, loggableError, REDIS, RedisKeys, SecretBox } from '@app/runtime';
import { unixSeconds, verifyOpenApiSign, withinTolerance } from '@app/signing';
import { isAuthFailure, OpenApiAuthFailures } from './open-api-auth-failures';
import { parseAuthQuery } from './open-api-auth-query';
import { authFailed, replayedNonce, serviceUnavailable, staleTimestamp } from './open-api-errors';
import { OpenApiRateLimiter } from './open-api-rate-limiter';
import { accountActor, setAuditActor } from '../audit/audit-actor';

export interface OpenApiCaller {
  accountId: number;
}

type OpenApiRequest = Request & { openApiCaller?: OpenApiCaller };

/** Compared against when the email is unknown, so unknown emails and wrong signs cost the same time. */
const UNKNOWN_ACCOUNT_TOKEN = 'unknown-account-placeholder-token';

/**
 * Authenticates every Open API call (CONTRACT §2). Checks run cheapest and least revealing first, and
 * nothing is written to Redis for a call until every check that could refuse it has passed:
 *   1. sign_version, timestamp format, nonce presence and length, email/sign presence (query only; no I/O)
 *   2. account by email (case-insensitive) and the signature (constant time)  → 2059
 *   3. timestamp within ±300 s                                                 → 20622
 *   4. nonce already remembered (a read)                                       → 20623
 *   5. the account's per-minute budget                                         → 429 / 2000
 *   6. the nonce remembered for 15 minutes, as a fixed-size digest (SET NX EX) → 20623 when a twin won
 * Replay is looked at before the rate limit, so a replayed request cannot drain the owner's budget; the
 * nonce is remembered after it, so calls refused by the limit leave nothing behind.
 * A failed authentication counts against the (email, client address) pair; past 20 in a minute further
 * failing calls answer 429 instead, while a correctly signed call still passes (OpenApiAuthFailures).
 * When Redis cannot answer, the call is refused (503) rather than let through without replay protection.
 */
@Injectable()
export class OpenApiAuthGuard implements CanActivate {
  private readonly logger = new Logger(OpenApiAuthGuard.name);
  /** Opened in place of a real token when the email is unknown, so both paths decrypt once. */
  private readonly sealedUnknownToken: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly rateLimiter: OpenApiRateLimiter,
    private readonly secrets: SecretBox,
    private readonly failures: OpenApiAuthFailures,
  ) {
    this.sealedUnknownToken = secrets.seal(UNKNOWN_ACCOUNT_TOKEN);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<OpenApiRequest>();
    const response = http.getResponse<Response>();
    try {
      request.openApiCaller = await this.authenticate(request, response);
      setAuditActor(request, accountActor(request.openApiCaller.accountId, 'open_api'));
      return true;
    } catch (error) {
      if (isAuthFailure(error)) {
        await this.failures.countOrRefuse(this.failures.keyOf(request), (seconds) => response.setHeader('Retry-After', String(seconds)));
      }
      throw error;
    }
  }

  private async authenticate(request: OpenApiRequest, response: Response): Promise<OpenApiCaller> {
    const auth = parseAuthQuery(request.query);

    const account = await this.findAccount(auth.email);
    const signMatches = verifyOpenApiSign(
      { email: auth.email, openApiToken: this.secrets.open(account?.openApiToken ?? this.sealedUnknownToken), timestamp: auth.timestampText, nonce: auth.nonce },
      auth.sign,
    );
    // One message for both cases, so the answer does not tell which emails have accounts.
    if (!account || !signMatches) throw authFailed('unknown email or wrong sign');

    const skew = this.environment.openApi.timestampSkewSeconds;
    if (!withinTolerance(auth.timestamp, unixSeconds(), skew)) {
      throw staleTimestamp(`timestamp is more than ${skew} s away from the server clock (server time ${unixSeconds()})`);
    }

    const nonceKey = this.keys.nonce(account.id, createHash('sha256').update(auth.nonce, 'utf8').digest('base64url'));
    await this.refuseUsedNonce(nonceKey, () => this.redis.exists(nonceKey).then((count) => count === 0));
    await this.rateLimiter.consume(account.id, ({ retryAfterSeconds }) => response.setHeader('Retry-After', String(retryAfterSeconds)));
    await this.refuseUsedNonce(nonceKey, async () => (await this.redis.set(nonceKey, '1', 'EX', this.environment.openApi.nonceTtlSeconds, 'NX')) === 'OK');
    return { accountId: account.id };
  }

  /** Read on every call, never cached: a rotated token is refused by every process from the moment it is stored. */
  private findAccount(email: string): Promise<Pick<Account, 'id' | 'openApiToken'> | null> {
    // lower(email) matches the unique index accounts_email_key, so this is an index lookup.
    return this.dataSource
      .getRepository(Account)
      .createQueryBuilder('account')
      .select(['account.id', 'account.openApiToken'])
      .where('lower(account.email) = lower(:email)', { email })
      .getOne();
  }

  /** `fresh` answers whether the nonce is unused (and may claim it); 20623 when not, 503 when Redis cannot say. */
  private async refuseUsedNonce(nonceKey: string, fresh: () => Promise<boolean>): Promise<void> {
    let unused: boolean;
    try {
      unused = await fresh();
    } catch (error) {
      this.logger.warn(loggableError(error), 'nonce store unavailable; refusing Open API call');
      throw serviceUnavailable('replay protection is unavailable (Redis is not reachable); try again shortly');
    }
    if (!unused) {
      throw replayedNonce(`nonce was already used by this account within the last ${this.environment.openApi.nonceTtlSeconds / 60} minutes`);
    }
  }
}

/** The account the OpenApiAuthGuard authenticated. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): OpenApiCaller => {
  const caller = context.switchToHttp().getRequest<OpenApiRequest>().openApiCaller;
  if (!caller) throw new Error('Caller used on a route without OpenApiAuthGuard');
  return caller;
});
