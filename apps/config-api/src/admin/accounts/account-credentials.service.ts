import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { RotatedSecret, RotatedToken } from '@app/payloads';
import { PRIMARY_DESTINATION_ID } from '@app/persistence';
import { DomainError, loggableErrorText, publishSettingsChanged, REDIS, RedisKeys, SecretBox } from '@app/runtime';
import { generateSigningSecret, generateToken } from '@app/signing';
import { rotateTokenEndingPortalAccess } from '../../portal-access/portal-access.service';

/** How long a rotated-out signing secret keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * Replaces an account's credentials (CONTRACT §3). Every value is written sealed; the plaintext exists
 * only in this answer. The Open API guard reads the token from PostgreSQL on every call (no cache), so a
 * new token is in force on every config-api process once the UPDATE commits; the workers cache signing
 * secrets, so every change of them is announced on the settings channel.
 */
@Injectable()
export class AccountCredentialsService {
  private readonly logger = new Logger(AccountCredentialsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
  ) {}

  /** New secret now; the old one keeps signing for SECRET_OVERLAP_MS so receivers can switch without a gap. */
  async rotateSecret(accountId: number): Promise<RotatedSecret> {
    const signingSecret = generateSigningSecret();
    const expiresAt = new Date(Date.now() + SECRET_OVERLAP_MS);
    // The current value moves over as stored (sealed under whichever key sealed it).
    await this.updatePrimarySecrets(
      accountId,
      'previous_signing_secret = signing_secret, previous_secret_expires_at = $2, signing_secret = $3',
      [expiresAt, this.secrets.seal(signingSecret)],
    );
    // Answered even if the workers cannot be told now: the new secret exists only in this answer. A worker
    // that learns of it late (within its 30 s cache bound) signs with the old secret, which receivers accept
    // for the 24 hours of the overlap anyway.
    await publishSettingsChanged(this.redis, this.keys, accountId).catch((error: unknown) => {
      this.logger.warn(`could not announce the secret rotation of account ${accountId}: ${loggableErrorText(error)}`);
    });
    return { signing_secret: signingSecret, previous_secret_expires_at: expiresAt.toISOString() };
  }

  /** The previous secret stops signing now, not at the end of its overlap (a leaked secret). */
  async revokePreviousSecret(accountId: number): Promise<void> {
    await this.updatePrimarySecrets(accountId, 'previous_signing_secret = NULL, previous_secret_expires_at = NULL', []);
    try {
      await publishSettingsChanged(this.redis, this.keys, accountId);
    } catch {
      throw new DomainError(
        'service_unavailable', 'the previous secret is revoked in the database, but Redis could not tell the workers: they stop signing with it within 30 s',
      );
    }
  }

  /** The new token, and every portal session and link code of the account ended with the old one. */
  async rotateToken(accountId: number): Promise<RotatedToken> {
    const openApiToken = generateToken(24);
    const sealed = this.secrets.seal(openApiToken);
    const rotated = await this.dataSource.transaction((manager) => rotateTokenEndingPortalAccess(manager, accountId, sealed));
    if (!rotated) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return { open_api_token: openApiToken };
  }

  /**
   * The account's signing secrets are its primary destination's (the push URL signs with them). `assignments`
   * uses $2, $3, … for `values`; $1 is the account id.
   */
  private async updatePrimarySecrets(accountId: number, assignments: string, values: unknown[]): Promise<void> {
    const [rows] = await this.dataSource.query<[unknown[], number]>(
      `UPDATE destinations d SET ${assignments}, version = d.version + 1, updated_at = now()
         FROM accounts a
        WHERE a.id = $1 AND a.deleted_at IS NULL AND d.account_id = a.id AND d.id = '${PRIMARY_DESTINATION_ID}'
        RETURNING d.account_id`,
      [accountId, ...values],
    );
    if (rows.length === 0) throw new DomainError('not_found', `account ${accountId} does not exist`);
  }
}
