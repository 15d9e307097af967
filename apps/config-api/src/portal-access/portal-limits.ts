import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { DomainError, MinuteLimit, REDIS, type RedisClient, RedisKeys } from '@app/runtime';

/** Portal calls a minute per session, and bulk redeliveries a minute per account (CONTRACT §10). */
export const PORTAL_CALLS_PER_MINUTE = 120;
/**
 * Portal calls a minute per account, every session together: new sessions (a link a minute through the
 * Open API) must not multiply the per-session budget without end. Five sessions' worth, so a user with a
 * few tabs open never meets it.
 */
export const PORTAL_ACCOUNT_CALLS_PER_MINUTE = 5 * PORTAL_CALLS_PER_MINUTE;
export const BULK_REDELIVERIES_PER_MINUTE = 5;

/** The 429 of the portal, with `Retry-After` on the response. */
export function portalRateLimited(response: Response, retryAfterSeconds: number, why: string): DomainError {
  response.setHeader('Retry-After', String(retryAfterSeconds));
  return new DomainError('too_many_requests', `${why}; retry in ${retryAfterSeconds} s`);
}

/**
 * The portal's limits beyond test events (those are TestEventService's, shared with the Open API): calls
 * per session, and bulk redeliveries per account, one at a time. Counters live in Redis, one small key per
 * session or account for a minute, so any number of calls keeps the same state.
 */
@Injectable()
export class PortalLimits {
  private readonly calls: MinuteLimit;
  private readonly accountCalls: MinuteLimit;
  private readonly bulkRedeliveries: MinuteLimit;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) redis: RedisClient,
    keys: RedisKeys,
  ) {
    this.calls = new MinuteLimit(redis, keys.portalCallsLimit(), PORTAL_CALLS_PER_MINUTE);
    this.accountCalls = new MinuteLimit(redis, keys.portalAccountCallsLimit(), PORTAL_ACCOUNT_CALLS_PER_MINUTE);
    this.bulkRedeliveries = new MinuteLimit(redis, keys.portalBulkLimit(), BULK_REDELIVERIES_PER_MINUTE);
  }

  /**
   * One call of the session (named by its token's digest, never the token) and of its account. When Redis
   * cannot count the call goes on: the portal's reads need only PostgreSQL, and its writes that need Redis
   * refuse anyway.
   */
  async spendCall(sessionDigest: string, accountId: number, response: Response): Promise<void> {
    const retryAfterSeconds = await this.calls.take(sessionDigest).catch(() => null);
    if (retryAfterSeconds !== null) throw portalRateLimited(response, retryAfterSeconds, `more than ${PORTAL_CALLS_PER_MINUTE} portal calls a minute in this session`);
    const accountRetryAfter = await this.accountCalls.take(String(accountId)).catch(() => null);
    if (accountRetryAfter !== null) {
      throw portalRateLimited(response, accountRetryAfter, `more than ${PORTAL_ACCOUNT_CALLS_PER_MINUTE} portal calls a minute for this account, its sessions together`);
    }
  }

  /**
   * Admits one bulk redelivery of the account: 409 while one of the account's runs (not counted), 429
   * past the minute's budget. Two asked at the very same moment can both pass the 409 check; the budget
   * still bounds them.
   */
  async admitBulkRedelivery(accountId: number, response: Response): Promise<void> {
    const running = await this.dataSource.query<unknown[]>(
      "SELECT 1 FROM redelivery_tasks WHERE account_id = $1 AND status = 'running' LIMIT 1",
      [accountId],
    );
    if (running.length > 0) throw new DomainError('conflict', 'a bulk redelivery is already running for this account; follow it to the end, then ask again');
    let retryAfterSeconds: number | null;
    try {
      retryAfterSeconds = await this.bulkRedeliveries.take(String(accountId));
    } catch {
      throw new DomainError('service_unavailable', 'the rate limiter is unavailable (Redis is not reachable); try again shortly');
    }
    if (retryAfterSeconds !== null) {
      throw portalRateLimited(response, retryAfterSeconds, `more than ${BULK_REDELIVERIES_PER_MINUTE} bulk redeliveries a minute for this account`);
    }
  }
}
