import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ApiError, loggableErrorText, publishSettingsChanged, REDIS, RedisKeys, SecretBox, stampBotWebhooksChanged } from '@app/runtime';
import { generateToken } from '@app/signing';
import { AccountDeletionRunner } from './account-deletion-runner.service';

export interface AccountDeletionStarted {
  id: number;
  status: 'deleting';
}

/**
 * Offboarding (CONTRACT §12). In one transaction: the account is marked deleted (every admin route,
 * ingest and the portal links refuse it from then on), its Open API token is replaced by one nobody
 * knows (2059: the guard reads the token from PostgreSQL on every call), its portal sessions and link
 * codes, bot webhooks and callback settings are deleted, its destinations marked deleted. Then the other processes are told (the
 * workers' settings caches, ingest's bot webhook lookups) and the rows go in the background.
 */
@Injectable()
export class AccountDeletionService {
  private readonly logger = new Logger(AccountDeletionService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
    private readonly runner: AccountDeletionRunner,
  ) {}

  async delete(accountId: number): Promise<AccountDeletionStarted> {
    const started = await this.dataSource.transaction(async (manager) => {
      const [rows] = await manager.query<[unknown[], number]>(
        `UPDATE accounts SET deleted_at = now(), open_api_token = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING id`,
        [accountId, this.secrets.seal(generateToken(24))],
      );
      if (rows.length === 0) return false;
      for (const table of ['portal_sessions', 'portal_link_codes', 'bot_webhooks', 'callback_settings']) {
        await manager.query(`DELETE FROM ${table} WHERE account_id = $1`, [accountId]);
      }
      // Its destinations stop at once: ingest takes no more deliveries for them and the worker ends their
      // pending ones without a call; their credentials go now (CONTRACT §11), the rows with the account (ON DELETE CASCADE).
      await manager.query(
        `UPDATE destinations
            SET deleted_at = now(), version = version + 1, updated_at = now(),
                target = NULL, target_shown = NULL, auth = NULL, signing_secret = NULL, previous_signing_secret = NULL, previous_secret_expires_at = NULL
          WHERE account_id = $1 AND deleted_at IS NULL`,
        [accountId],
      );
      // An id given again after an earlier offboarding (accounts may be created with the operator's own id)
      // finds that deletion's finished row: this deletion starts it afresh. A running one cannot be there:
      // the account row it deletes last would have kept the id from being created again.
      await manager.query(
        `INSERT INTO account_deletions (id, lease_owner, heartbeat_at) VALUES ($1, $2, now())
         ON CONFLICT (id) DO UPDATE
           SET status = 'running', events_deleted = 0, lease_owner = EXCLUDED.lease_owner, heartbeat_at = now(),
               created_at = now(), finished_at = NULL, error = NULL`,
        [accountId, this.runner.owner],
      );
      return true;
    });
    if (!started) throw new ApiError(404, 'not_found', `account ${accountId} does not exist`);
    // Stored already: a process that cannot hear it stops within its cache bound (30 s).
    await Promise.all([publishSettingsChanged(this.redis, this.keys, accountId), stampBotWebhooksChanged(this.redis, this.keys, accountId)]).catch((error: unknown) => {
      this.logger.warn(`could not announce the deletion of account ${accountId}: ${loggableErrorText(error)}`);
    });
    this.runner.run(accountId);
    return { id: accountId, status: 'deleting' };
  }
}
