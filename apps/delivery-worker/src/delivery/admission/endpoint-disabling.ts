import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { destinationStatements, PRIMARY_DESTINATION_ID, Sql } from '@app/persistence';
import { ENVIRONMENT, type Environment, formatDurationMs, loggableErrorText, publishSettingsChanged, REDIS, RedisKeys } from '@app/runtime';
import { type DestinationSettings, DestinationSettingsCache } from '../destinations/destination-settings.cache';
import { OperationalEventsService } from '../holding/operational-events.service';

/** A delivery's last_error when its destination is disabled: what happened and what the operator can do. */
export function disabledEndpointError(destination: Pick<DestinationSettings, 'accountId' | 'id' | 'disabledAt' | 'disabledReason'>): string {
  const since = destination.disabledAt ? ` since ${destination.disabledAt.toISOString()}` : '';
  const reason = destination.disabledReason ? ` (${destination.disabledReason})` : '';
  if (destination.id === PRIMARY_DESTINATION_ID) {
    return (
      `endpoint disabled${since}${reason}; no call made. ` +
      `Enable it (POST /admin/v1/accounts/${destination.accountId}/endpoint/enable, or set_url), then redeliver`
    );
  }
  return `destination ${destination.id} disabled${since}${reason}; no call made. Enable it, then redeliver`;
}

/**
 * Destinations that stay dead are disabled (ENDPOINT_DISABLE_AFTER), and a retry policy may disable one
 * at once (`disable_on`, CONTRACT §13). The clock is the destination row's `failing_since`, written only
 * on transitions (first failure after a success, first success after failures, disabling) and read from
 * the destination cache, so an attempt costs no extra query. Every transition is announced on the
 * settings channel so the other workers reload the account.
 */
@Injectable()
export class EndpointDisabling {
  private readonly logger = new Logger(EndpointDisabling.name);

  constructor(
    private readonly sql: Sql,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly keys: RedisKeys,
    private readonly cache: DestinationSettingsCache,
    private readonly operational: OperationalEventsService,
  ) {}

  /**
   * Before a call: the destination as it stands when it is (or is now found to be) disabled, else null.
   * Disabling happens here, when the next call falls due, so no call is made once it has failed long enough.
   */
  async disabled(destination: DestinationSettings): Promise<DestinationSettings | null> {
    if (destination.disabledAt) return destination;
    const { endpointDisableAfterMs } = this.environment.delivery;
    if (destination.failingSince === null || Date.now() - destination.failingSince < endpointDisableAfterMs) return null;
    const row = await this.sql.first(destinationStatements.DISABLE_AFTER_FAILING, {
      accountId: destination.accountId,
      destinationId: destination.id,
      afterMs: endpointDisableAfterMs,
      afterText: formatDurationMs(endpointDisableAfterMs),
    });
    const current: DestinationSettings = {
      ...destination,
      failingSince: row?.failing_since ? row.failing_since.getTime() : null,
      disabledAt: row?.disabled_at ?? null,
      disabledReason: row?.disabled_reason ?? null,
    };
    this.cache.patch(destination, current);
    if (!current.disabledAt) return null;
    if (row?.disabled_now) {
      this.logger.warn(`destination ${destination.id} of account ${destination.accountId} disabled: ${current.disabledReason ?? ''}`);
      await this.announce(destination.accountId);
      await this.operational.emit(destination, 'Destination_disabled', current.disabledReason ?? 'disabled');
    }
    return current;
  }

  /** Disables the destination now, for its retry policy's `disable_on` (a no-op when it already is). */
  async disableNow(destination: DestinationSettings, reason: string): Promise<void> {
    try {
      const row = await this.sql.first(destinationStatements.DISABLE_NOW, { accountId: destination.accountId, destinationId: destination.id, reason });
      if (!row) return;
      this.cache.patch(destination, { disabledAt: row.disabled_at, disabledReason: row.disabled_reason });
      this.logger.warn(`destination ${destination.id} of account ${destination.accountId} disabled: ${reason}`);
      await this.announce(destination.accountId);
      await this.operational.emit(destination, 'Destination_disabled', reason);
    } catch (error) {
      this.cache.invalidate(destination.accountId);
      this.logger.warn(`could not disable destination ${destination.id} of account ${destination.accountId}: ${loggableErrorText(error)}`);
    }
  }

  /**
   * After a call, beside its record: starts or stops the failure clock when this is a transition.
   * Never throws: a missed transition is caught up by the next call once the cache reloads.
   */
  async noteOutcome(destination: DestinationSettings, success: boolean, at: Date): Promise<void> {
    if (success === (destination.failingSince === null)) return;
    this.cache.patch(destination, { failingSince: success ? null : at.getTime() });
    const key = { accountId: destination.accountId, destinationId: destination.id };
    try {
      if (success) await this.sql.rows(destinationStatements.STOP_FAILING, key);
      else await this.sql.rows(destinationStatements.START_FAILING, { ...key, at });
      await this.announce(destination.accountId);
    } catch (error) {
      this.cache.invalidate(destination.accountId);
      this.logger.warn(`could not record the health of destination ${destination.id} of account ${destination.accountId}: ${loggableErrorText(error)}`);
    }
  }

  /** The other workers reload the account; if Redis cannot take it their cache expires soon anyway. */
  private async announce(accountId: number): Promise<void> {
    try {
      await publishSettingsChanged(this.redis, this.keys, accountId);
    } catch (error) {
      this.logger.debug(`could not announce the destination change of account ${accountId}: ${loggableErrorText(error)}`);
    }
  }
}
