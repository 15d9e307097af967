import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DidNotAnswerInTime, within } from '../async/within';
import type { RedisClient } from '../redis/redis-connection';
import { REDIS } from '../redis/redis.module';
import { SecretBox, SecretBoxError } from '../secrets/secret-box';

const CHECK_TIMEOUT_MS = 2000;

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: { postgres: string; redis: string; secrets: string };
}

/**
 * What a failed check says: words of the service's own (CONTRACT §1). A driver's message names hosts,
 * ports and users (`connect ECONNREFUSED 10.0.0.7:6379`, `password authentication failed for user …`),
 * and /health/ready is often reachable by more people than the logs are.
 */
export const CHECK_TIMED_OUT = `down: no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
export const CHECK_FAILED = 'down: the check failed';

function outcomeOf(check: Promise<unknown>): Promise<string> {
  return within(check, CHECK_TIMEOUT_MS).then(
    () => 'ok',
    (error: unknown) => (error instanceof DidNotAnswerInTime ? CHECK_TIMED_OUT : CHECK_FAILED),
  );
}

/**
 * Whether PostgreSQL and Redis answer now, and whether this process's keys open what is stored:
 * behind `/health/ready`, and what the worker waits for before consuming. On a cluster or behind
 * sentinels the command connection answers only once it has found the slots or the current primary, so
 * a PING through it is the whole check. A process whose SECRETS_KEY (or SECRETS_PREVIOUS_KEYS) cannot
 * open the newest account's stored secrets would fail every call that needs them: it is not ready, and
 * says why (SecretBox's words name a key id, never a key or a value).
 */
@Injectable()
export class ReadinessService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly secretBox: SecretBox,
  ) {}

  async check(): Promise<ReadinessReport> {
    const [postgres, redis, secrets] = await Promise.all([outcomeOf(this.dataSource.query('SELECT 1')), outcomeOf(this.redis.ping()), this.secretsOpen()]);
    return { status: postgres === 'ok' && redis === 'ok' && secrets === 'ok' ? 'ok' : 'unavailable', checks: { postgres, redis, secrets } };
  }

  /** One primary-key probe: the newest account's token and signing secret (its primary destination's), opened. */
  private async secretsOpen(): Promise<string> {
    let rows: { open_api_token: string; signing_secret: string | null }[];
    try {
      rows = await within(
        this.dataSource.query(
          `SELECT a.open_api_token, d.signing_secret FROM (SELECT id, open_api_token FROM accounts ORDER BY id DESC LIMIT 1) a
             LEFT JOIN destinations d ON d.account_id = a.id AND d.id = 'primary'`,
        ),
        CHECK_TIMEOUT_MS,
      );
    } catch (error) {
      return error instanceof DidNotAnswerInTime ? CHECK_TIMED_OUT : CHECK_FAILED;
    }
    try {
      for (const row of rows) for (const stored of [row.open_api_token, row.signing_secret]) if (stored !== null) this.secretBox.open(stored);
      return 'ok';
    } catch (error) {
      return error instanceof SecretBoxError ? `down: ${error.message}` : CHECK_FAILED;
    }
  }
}
