import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ENVIRONMENT, type Environment, loggableErrorText, loggableUrl, publishSettingsChanged, REDIS, RedisKeys } from '@app/runtime';
import { type AccountDeliverySettings, AccountSettingsCache } from '../account-settings.cache';

/** `432000000` → `5d`: the setting as an operator would write it, for the disabling reason. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** The event's last_error when its endpoint is disabled: what happened and what the operator can do. */
export function disabledEndpointError(settings: Pick<AccountDeliverySettings, 'accountId' | 'disabledAt' | 'disabledReason'>): string {
  const since = settings.disabledAt ? ` since ${settings.disabledAt.toISOString()}` : '';
  return (
    `endpoint disabled${since}${settings.disabledReason ? ` (${settings.disabledReason})` : ''}; no call made. ` +
    `Enable it (POST /admin/v1/accounts/${settings.accountId}/endpoint/enable, or set_url), then redeliver`
  );
}

/** Marks the start of a run of failures; only while none is recorded and the endpoint is enabled. */
const START_FAILING_SQL = `
  UPDATE callback_settings SET failing_since = $2
   WHERE account_id = $1 AND failing_since IS NULL AND disabled_at IS NULL`;

const RECOVERED_SQL = `UPDATE callback_settings SET failing_since = NULL WHERE account_id = $1 AND failing_since IS NOT NULL`;

/**
 * Disables only when the database agrees: still failing since at least the threshold (a success in
 * another worker clears failing_since, and this worker's cache may not know yet). Otherwise answers
 * the row as it is, so the cache can catch up.
 */
const DISABLE_SQL = `
  WITH disabled AS (
    UPDATE callback_settings
       SET disabled_at = now(),
           disabled_reason = 'every attempt since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ' failed (ENDPOINT_DISABLE_AFTER ' || $3 || ')'
     WHERE account_id = $1 AND disabled_at IS NULL AND failing_since IS NOT NULL
       AND failing_since <= now() - make_interval(secs => $2::double precision / 1000)
    RETURNING failing_since, disabled_at, disabled_reason
  )
  SELECT failing_since, disabled_at, disabled_reason, true AS disabled_now FROM disabled
  UNION ALL
  SELECT failing_since, disabled_at, disabled_reason, false FROM callback_settings
   WHERE account_id = $1 AND NOT EXISTS (SELECT 1 FROM disabled)`;

interface SettingsState {
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** This statement disabled it (another worker may have done so already). */
  disabled_now: boolean;
}

/**
 * Endpoints that stay dead are disabled (ENDPOINT_DISABLE_AFTER). The clock is `failing_since` in
 * callback_settings, written only on transitions (first failure after a success, first success after
 * failures, disabling) and read from the settings cache, so an attempt costs no extra query. Every
 * transition is announced on the settings channel so the other workers reload the account.
 */
@Injectable()
export class EndpointDisabling {
  private readonly logger = new Logger(EndpointDisabling.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly keys: RedisKeys,
    private readonly settings: AccountSettingsCache,
  ) {}

  /**
   * Before an attempt: the settings as they stand when the endpoint is (or is now found to be)
   * disabled, else null. Disabling happens here, when the next attempt falls due, so no call is made
   * once the endpoint has failed for long enough.
   */
  async disabled(settings: AccountDeliverySettings): Promise<AccountDeliverySettings | null> {
    if (settings.disabledAt) return settings;
    const { endpointDisableAfterMs } = this.environment.delivery;
    if (settings.failingSince === null || Date.now() - settings.failingSince < endpointDisableAfterMs) return null;

    const [row] = await this.dataSource.query<SettingsState[]>(DISABLE_SQL, [
      settings.accountId,
      endpointDisableAfterMs,
      formatDuration(endpointDisableAfterMs),
    ]);
    const current: AccountDeliverySettings = {
      ...settings,
      failingSince: row?.failing_since ? row.failing_since.getTime() : null,
      disabledAt: row?.disabled_at ?? null,
      disabledReason: row?.disabled_reason ?? null,
    };
    this.settings.patch(settings.accountId, current);
    if (!current.disabledAt) return null;
    if (row?.disabled_now) {
      this.logger.warn(`endpoint of account ${settings.accountId} (${loggableUrl(settings.pushUrl)}) disabled: ${current.disabledReason ?? ''}`);
      await this.announce(settings.accountId);
    }
    return current;
  }

  /**
   * After an attempt (a call made, or one skipped because the breaker is open), before it is recorded:
   * starts or stops the failure clock when this is a transition. Never throws: a missed transition is
   * caught up by the next attempt once the cache reloads.
   */
  async noteOutcome(settings: AccountDeliverySettings, success: boolean, at: Date): Promise<void> {
    const accountId = settings.accountId;
    if (success === (settings.failingSince === null)) return;
    this.settings.patch(accountId, { failingSince: success ? null : at.getTime() });
    try {
      if (success) await this.dataSource.query(RECOVERED_SQL, [accountId]);
      else await this.dataSource.query(START_FAILING_SQL, [accountId, at]);
      await this.announce(accountId);
    } catch (error) {
      this.settings.invalidate(accountId);
      this.logger.warn(`could not record the endpoint health of account ${accountId}: ${loggableErrorText(error)}`);
    }
  }

  /** The other workers reload the account; if Redis cannot take it their cache expires soon anyway. */
  private async announce(accountId: number): Promise<void> {
    try {
      await publishSettingsChanged(this.redis, this.keys, accountId);
    } catch (error) {
      this.logger.debug(`could not announce the endpoint change of account ${accountId}: ${loggableErrorText(error)}`);
    }
  }
}
