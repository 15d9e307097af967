import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { DomainError, loggableErrorText, publishSettingsChanged, REDIS, RedisKeys, SecretBox, stampBotWebhooksChanged, TaskQueue } from '@app/runtime';
import { generateToken } from '@app/signing';

export interface AccountDeletionStarted {
  id: number;
  status: 'deleting';
}

/**
 * Offboarding (CONTRACT §12). In one transaction: the account is marked deleted (every admin route,
 * ingest and the portal links refuse it from then on), its Open API token is replaced by one nobody
 * knows (2059: the guard reads the token from PostgreSQL on every call), its portal sessions and link
 * codes, bot webhooks and callback settings are deleted, its destinations marked deleted. Then the other processes are told (the
 * workers' settings caches, ingest's bot webhook lookups), and the deletion of the rows is recorded as
 * a task (account_deletions) that a delivery worker runs.
 */
@Injectable()
export class AccountDeletionService {
  private readonly logger = new Logger(AccountDeletionService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
    private readonly tasks: TaskQueue,
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
        `INSERT INTO account_deletions (id) VALUES ($1)
         ON CONFLICT (id) DO UPDATE
           SET status = 'running', events_deleted = 0, lease_owner = NULL, heartbeat_at = NULL,
               created_at = now(), finished_at = NULL, error = NULL`,
        [accountId],
      );
      return true;
    });
    if (!started) throw new DomainError('not_found', `account ${accountId} does not exist`);
    // Stored already: a process that cannot hear it stops within its cache bound (30 s).
    await Promise.all([publishSettingsChanged(this.redis, this.keys, accountId), stampBotWebhooksChanged(this.redis, this.keys, accountId)]).catch((error: unknown) => {
      this.logger.warn(`could not announce the deletion of account ${accountId}: ${loggableErrorText(error)}`);
    });
    await this.tasks.announce('account-deletion', accountId);
    return { id: accountId, status: 'deleting' };
  }
}
