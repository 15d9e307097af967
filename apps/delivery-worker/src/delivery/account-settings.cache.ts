import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CONTENT_TYPE_JSON } from '@app/payloads';
import { Batcher, ChangeSubscription, ENVIRONMENT, type Environment, RedisKeys, SecretBox, setBounded, type Settled } from '@app/runtime';

/** What delivering to one account needs, secrets included: lives in this process's memory only. */
export interface AccountDeliverySettings {
  accountId: number;
  pushUrl: string | null;
  encoding: 'json' | 'form';
  permissions: Readonly<Record<string, boolean>>;
  signingSecret: string;
  previousSigningSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** Epoch ms the current run of failed attempts began; null after a success (ENDPOINT_DISABLE_AFTER). */
  failingSince: number | null;
  /** Set while the endpoint is disabled: no calls are made. */
  disabledAt: Date | null;
  disabledReason: string | null;
  /** Delivery options (CONTRACT §9). */
  ordering: 'none' | 'subject';
  maxPerSecond: number | null;
  /** The primary's pause (CONTRACT §11): its events wait, unattempted, until resumed. */
  paused: boolean;
}

/** The secrets that sign a callback sent at `nowMs`: the current one, plus the previous one during its overlap. */
export function signingSecretsAt(settings: AccountDeliverySettings, nowMs: number): string[] {
  const secrets = [settings.signingSecret];
  if (settings.previousSigningSecret && settings.previousSecretExpiresAt !== null && settings.previousSecretExpiresAt > nowMs) {
    secrets.push(settings.previousSigningSecret);
  }
  return secrets;
}

/** Safety net for a lost notification; changes normally arrive through the settings channel at once. */
export const SETTINGS_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

const LOAD_SQL = `
  SELECT a.id AS account_id, a.signing_secret, a.previous_signing_secret, a.previous_secret_expires_at,
         s.push_url, s.push_content_type, s.permissions, s.failing_since, s.disabled_at, s.disabled_reason,
         s.delivery_ordering, s.max_per_second, s.paused
    FROM accounts a
    LEFT JOIN callback_settings s ON s.account_id = a.id
   WHERE a.id = ANY($1::int[])`;

interface SettingsRow {
  account_id: number;
  signing_secret: string;
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
  push_url: string | null;
  push_content_type: string | null;
  permissions: Record<string, boolean> | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  delivery_ordering: string | null;
  max_per_second: number | null;
  paused: boolean | null;
}

interface Entry {
  settings: AccountDeliverySettings | null;
  expiresAt: number;
}

/**
 * Account settings held in memory, so delivering an event costs no settings query once an account is
 * cached. Kept fresh by the settings channel (the config API publishes the account id on every change):
 * a message drops that account, a (re)connect drops everything since messages may have been missed
 * meanwhile, and while the subscription is down nothing is served from memory at all.
 */
@Injectable()
export class AccountSettingsCache implements OnModuleInit, OnApplicationShutdown {
  private readonly entries = new Map<number, Entry>();
  /** Bumped by every invalidation, so a load that raced one is not cached. */
  private readonly generations = new Map<number, number>();
  private epoch = 0;
  private readonly loader: Batcher<number, AccountDeliverySettings | null>;
  private readonly subscription: ChangeSubscription;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly secrets: SecretBox,
  ) {
    this.loader = new Batcher((ids) => this.loadMany(ids), { maxBatch: 500, maxInFlight: 2, lingerMs: 0 });
    this.subscription = new ChangeSubscription(environment, new RedisKeys(environment.redis.prefix).settingsChannel(), 'delivery-settings', {
      onAccount: (accountId) => this.invalidate(accountId),
      onResync: () => this.invalidateAll(),
    });
  }

  onModuleInit(): void {
    this.subscription.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    await this.subscription.close();
  }

  /** The account's settings, or null when the account does not exist. */
  async get(accountId: number): Promise<AccountDeliverySettings | null> {
    const now = Date.now();
    const listening = this.subscription.listening;
    const cached = this.entries.get(accountId);
    if (listening && cached && cached.expiresAt > now) return cached.settings;

    const epoch = this.epoch;
    const generation = this.generations.get(accountId) ?? 0;
    const settings = await this.loader.submit(accountId);
    if (listening && epoch === this.epoch && generation === (this.generations.get(accountId) ?? 0)) {
      setBounded(this.entries, accountId, { settings, expiresAt: Date.now() + SETTINGS_TTL_MS }, MAX_ENTRIES);
    }
    return settings;
  }

  invalidate(accountId: number): void {
    this.entries.delete(accountId);
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }

  /**
   * Applies a change this process just wrote (the endpoint's failure clock, its disabling) to the cached
   * entry at once, so concurrent jobs of the account do not write the same transition again; a load
   * racing this is not cached.
   */
  patch(accountId: number, change: Partial<Pick<AccountDeliverySettings, 'failingSince' | 'disabledAt' | 'disabledReason'>>): void {
    const cached = this.entries.get(accountId);
    if (cached?.settings) cached.settings = { ...cached.settings, ...change };
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }

  invalidateAll(): void {
    this.entries.clear();
    this.generations.clear();
    this.epoch += 1;
  }

  private async loadMany(accountIds: number[]): Promise<Settled<AccountDeliverySettings | null>[]> {
    const rows = await this.dataSource.query<SettingsRow[]>(LOAD_SQL, [[...new Set(accountIds)]]);
    const byId = new Map(rows.map((row) => [row.account_id, row]));
    return accountIds.map((accountId) => {
      const row = byId.get(accountId);
      if (!row) return { ok: true, value: null };
      // One account whose secret cannot be opened (a key missing from SECRETS_PREVIOUS_KEYS) fails alone, not its batch.
      let signingSecret: string;
      let previousSigningSecret: string | null;
      try {
        signingSecret = this.secrets.open(row.signing_secret);
        previousSigningSecret = this.secrets.openNullable(row.previous_signing_secret);
      } catch (error) {
        return { ok: false, error };
      }
      return {
        ok: true,
        value: {
          accountId,
          pushUrl: row.push_url,
          encoding: (row.push_content_type ?? '').toUpperCase() === CONTENT_TYPE_JSON ? 'json' : 'form',
          permissions: row.permissions ?? {},
          signingSecret,
          previousSigningSecret,
          previousSecretExpiresAt: row.previous_secret_expires_at ? row.previous_secret_expires_at.getTime() : null,
          failingSince: row.failing_since ? row.failing_since.getTime() : null,
          disabledAt: row.disabled_at,
          disabledReason: row.disabled_reason,
          ordering: row.delivery_ordering === 'subject' ? 'subject' : 'none',
          maxPerSecond: row.max_per_second,
          paused: row.paused === true,
        },
      };
    });
  }
}
