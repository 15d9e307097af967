import { Inject, Injectable } from '@nestjs/common';
import { destinationStatements, Sql } from '@app/persistence';
import { deliveryEncodingOf, type DeliveryEncoding } from '@app/payloads';
import { Batcher, ChangeFollowingCache, destinationEndpointKey, ENVIRONMENT, type Environment, RedisKeys, SecretBox, setBounded, type Settled } from '@app/runtime';
import type { DestinationAuth } from './destination-transport';

/** A destination's retry policy as its deliveries follow it (CONTRACT §13). */
export interface RetryPolicy {
  scheduleMs: readonly number[];
  stopOn: ReadonlySet<number>;
  disableOn: ReadonlySet<number>;
}

/** What delivering to one destination needs, its credentials opened: lives in this process's memory only. */
export interface DestinationSettings {
  accountId: number;
  id: string;
  type: destinationStatements.DestinationRow['type'];
  /** The opened target; null: the primary without a push URL. */
  url: string | null;
  /** The target as views show it (a password as ***), for attempt rows. */
  shownTarget: string;
  auth: DestinationAuth | null;
  encoding: DeliveryEncoding;
  signingSecret: string;
  previousSigningSecret: string | null;
  previousSecretExpiresAt: number | null;
  ordering: 'none' | 'subject';
  maxPerSecond: number | null;
  paused: boolean;
  /** Epoch ms the current run of failed attempts began; null after a success (ENDPOINT_DISABLE_AFTER). */
  failingSince: number | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  deleted: boolean;
  retry: RetryPolicy;
  expireAfterMs: number | null;
  /** The key of its breaker, leases and pace (null: no target to key). */
  endpointKey: string | null;
  /** Why its credentials could not be opened (its deliveries then end failed, saying so); null when they were. */
  unopenable: string | null;
}

/** The secrets that sign a delivery sent at `nowMs`: the current one, plus the previous one during its overlap. */
export function signingSecretsAt(destination: DestinationSettings, nowMs: number): string[] {
  const secrets = [destination.signingSecret];
  if (destination.previousSigningSecret && destination.previousSecretExpiresAt !== null && destination.previousSecretExpiresAt > nowMs) {
    secrets.push(destination.previousSigningSecret);
  }
  return secrets;
}

/** Safety net for a lost notification; changes normally arrive through the settings channel at once. */
export const SETTINGS_TTL_MS = 30_000;
const MAX_ACCOUNTS = 50_000;

type AccountDestinations = ReadonlyMap<string, DestinationSettings>;

interface Entry {
  destinations: AccountDestinations;
  expiresAt: number;
}

/**
 * Every account's destinations (the primary included) held in memory with their credentials opened, so
 * a delivery step reads no destination row once its account is cached. Kept fresh by the settings
 * channel (config-api publishes the account on every change of its settings or destinations; the
 * worker, on its own failure-clock and disabling transitions): a message drops that account, a
 * (re)connect drops everything, and while the subscription is down nothing is served from memory.
 */
@Injectable()
export class DestinationSettingsCache extends ChangeFollowingCache {
  private readonly entries = new Map<number, Entry>();
  /** Bumped by every invalidation, so a load that raced one is not cached. */
  private readonly generations = new Map<number, number>();
  private epoch = 0;
  private readonly loader: Batcher<number, AccountDestinations>;

  constructor(
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly secrets: SecretBox,
    keys: RedisKeys,
  ) {
    super(environment, keys.settingsChannel(), 'delivery-destinations');
    this.loader = new Batcher((ids) => this.loadMany(ids), { maxBatch: 500, maxInFlight: 2, lingerMs: 0 });
  }

  /** The destination, or null when the account has no destination of that id (or no longer exists). */
  async get(accountId: number, destinationId: string): Promise<DestinationSettings | null> {
    return (await this.account(accountId)).get(destinationId) ?? null;
  }

  async account(accountId: number): Promise<AccountDestinations> {
    const now = Date.now();
    const listening = this.subscription.listening;
    const cached = this.entries.get(accountId);
    if (listening && cached && cached.expiresAt > now) return cached.destinations;
    const epoch = this.epoch;
    const generation = this.generations.get(accountId) ?? 0;
    const destinations = await this.loader.submit(accountId);
    if (listening && epoch === this.epoch && generation === (this.generations.get(accountId) ?? 0)) {
      setBounded(this.entries, accountId, { destinations, expiresAt: Date.now() + SETTINGS_TTL_MS }, MAX_ACCOUNTS);
    }
    return destinations;
  }

  invalidate(accountId: number): void {
    this.entries.delete(accountId);
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }

  invalidateAll(): void {
    this.entries.clear();
    this.generations.clear();
    this.epoch += 1;
  }

  /**
   * Applies a change this process just wrote (a failure-clock or disabling transition) to the cached
   * destination at once, so its account's concurrent jobs do not write the same transition again.
   */
  patch(destination: DestinationSettings, change: Partial<Pick<DestinationSettings, 'failingSince' | 'disabledAt' | 'disabledReason'>>): void {
    const cached = this.entries.get(destination.accountId);
    const current = cached?.destinations.get(destination.id);
    if (cached && current) {
      const destinations = new Map(cached.destinations);
      destinations.set(destination.id, { ...current, ...change });
      cached.destinations = destinations;
    }
    this.generations.set(destination.accountId, (this.generations.get(destination.accountId) ?? 0) + 1);
  }

  private async loadMany(accountIds: number[]): Promise<Settled<AccountDestinations>[]> {
    const rows = await this.sql.rows(destinationStatements.LOAD_ACCOUNT_DESTINATIONS, { accountIds: [...new Set(accountIds)] });
    const byAccount = new Map<number, Map<string, DestinationSettings>>();
    for (const row of rows) {
      const destinations = byAccount.get(row.account_id) ?? new Map<string, DestinationSettings>();
      destinations.set(row.id, this.settingsOf(row));
      byAccount.set(row.account_id, destinations);
    }
    return accountIds.map((accountId) => ({ ok: true, value: byAccount.get(accountId) ?? new Map() }));
  }

  private settingsOf(row: destinationStatements.DestinationRow): DestinationSettings {
    const opened = this.open(row);
    const url = opened.url;
    let endpointKey: string | null = null;
    try {
      endpointKey = url === null ? null : destinationEndpointKey(row.account_id, row.id, url);
    } catch {
      // Not a URL: the call fails by itself and is recorded like any other.
    }
    return {
      accountId: row.account_id,
      id: row.id,
      type: row.type,
      url,
      shownTarget: row.target_shown ?? '',
      auth: opened.auth,
      encoding: deliveryEncodingOf(row),
      signingSecret: opened.signingSecret,
      previousSigningSecret: opened.previousSigningSecret,
      previousSecretExpiresAt: row.previous_secret_expires_at ? row.previous_secret_expires_at.getTime() : null,
      ordering: row.ordering === 'subject' ? 'subject' : 'none',
      maxPerSecond: row.max_per_second,
      paused: row.paused,
      failingSince: row.failing_since ? row.failing_since.getTime() : null,
      disabledAt: row.disabled_at,
      disabledReason: row.disabled_reason,
      deleted: row.deleted_at !== null,
      retry: {
        scheduleMs: row.retry_schedule_ms ?? this.environment.delivery.retryScheduleMs,
        stopOn: new Set(row.stop_on),
        disableOn: new Set(row.disable_on),
      },
      expireAfterMs: row.expire_after_ms === null ? null : Number(row.expire_after_ms),
      endpointKey,
      unopenable: opened.problem,
    };
  }

  /** The row's sealed values opened; one destination whose credentials cannot be opened fails alone. */
  private open(row: destinationStatements.DestinationRow): { url: string | null; auth: DestinationAuth | null; signingSecret: string; previousSigningSecret: string | null; problem: string | null } {
    try {
      const auth = this.secrets.openNullable(row.auth);
      return {
        url: this.secrets.openNullable(row.target),
        auth: auth === null ? null : (JSON.parse(auth) as DestinationAuth),
        // Null only on a deleted destination (its credentials are deleted with it), which never signs.
        signingSecret: this.secrets.openNullable(row.signing_secret) ?? '',
        previousSigningSecret: this.secrets.openNullable(row.previous_signing_secret),
        problem: null,
      };
    } catch (error) {
      const why = error instanceof Error ? error.message : 'unreadable';
      return { url: null, auth: null, signingSecret: '', previousSigningSecret: null, problem: `cannot open the destination's credentials: ${why}` };
    }
  }
}
