import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type DestinationFilter, isEventAction, matchesDestinationFilter, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { ChangeFollowingCache, ENVIRONMENT, type Environment, RedisKeys, setBounded } from '@app/runtime';

/** What ingest needs to know of one extra destination to decide whether it takes an event. */
interface Taker {
  id: string;
  actions: ReadonlySet<string> | null;
  filter: DestinationFilter | null;
}

interface AccountTakers {
  permissions: Readonly<Record<string, boolean>>;
  takers: Taker[];
  expiresAt: number;
}

/** What ingest asks: the event's account, action and message. */
export interface FanOutEvent {
  accountId: number;
  action: string;
  message: Record<string, unknown>;
}

/** Safety net for a lost notification, as the worker's settings cache. */
export const DESTINATIONS_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

const ACCOUNTS_SQL = `SELECT DISTINCT account_id FROM destinations WHERE deleted_at IS NULL`;

const TAKERS_SQL = `
  SELECT d.account_id, d.id, d.actions, d.filter, s.permissions
    FROM destinations d
    LEFT JOIN callback_settings s ON s.account_id = d.account_id
   WHERE d.account_id = ANY($1::int[]) AND d.deleted_at IS NULL
   ORDER BY d.account_id, d.created_at, d.id`;

interface TakerRow {
  account_id: number;
  id: string;
  actions: string[] | null;
  filter: DestinationFilter | null;
  permissions: Record<string, boolean> | null;
}

/**
 * Which extra destinations take an event (CONTRACT §11): the account's permission for the action is
 * on, the destination's actions include it (null: all) and its filter matches the message. Decided
 * once, at ingest, so no process ever fans out twice. Held in memory and kept fresh by the settings
 * channel (config-api publishes the account on every destination change): the set of accounts that
 * have any destination is one small query per TTL for the whole process, so an account with none
 * costs no SQL per event (one after a change of its settings); an account with some costs one query
 * per TTL or change.
 */
@Injectable()
export class DestinationDirectory extends ChangeFollowingCache {
  private accounts: { ids: ReadonlySet<number>; expiresAt: number } | null = null;
  private readonly entries = new Map<number, AccountTakers>();
  /** Accounts announced as changed since the set was read: looked up on their next event (one query), then known again. */
  private readonly changed = new Map<number, true>();
  /** Bumped by every invalidation, so a load that raced one is not cached. */
  private epoch = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    super(environment, new RedisKeys(environment.redis.prefix).settingsChannel(), 'ingest-destinations');
  }

  /**
   * Per event (in order), the ids of the destinations that take it; null when none takes any event
   * of the list (the store then writes no delivery at all).
   */
  async takersOf(events: readonly FanOutEvent[]): Promise<string[][] | null> {
    const withDestinations = await this.accountsWithDestinations();
    const wanted = [...new Set(events.map((event) => event.accountId))].filter(
      (accountId) => withDestinations.has(accountId) || this.changed.has(accountId),
    );
    if (wanted.length === 0) return null;
    const byAccount = await this.takersByAccount(wanted);
    let any = false;
    const result = events.map((event) => {
      const entry = byAccount.get(event.accountId);
      const ids = entry ? takingIds(entry, event) : [];
      if (ids.length > 0) any = true;
      return ids;
    });
    return any ? result : null;
  }

  /** One account changed: its entry goes, and its next event looks it up again (it may have got its first destination). */
  invalidate(accountId: number): void {
    this.entries.delete(accountId);
    setBounded(this.changed, accountId, true, MAX_ENTRIES);
    this.epoch += 1;
  }

  invalidateAll(): void {
    this.entries.clear();
    this.changed.clear();
    this.accounts = null;
    this.epoch += 1;
  }

  private async accountsWithDestinations(): Promise<ReadonlySet<number>> {
    const now = Date.now();
    if (this.subscription.listening && this.accounts && this.accounts.expiresAt > now) return this.accounts.ids;
    const epoch = this.epoch;
    const rows = await this.dataSource.query<{ account_id: number }[]>(ACCOUNTS_SQL);
    const ids = new Set(rows.map((row) => row.account_id));
    if (this.subscription.listening && epoch === this.epoch) {
      this.accounts = { ids, expiresAt: Date.now() + DESTINATIONS_TTL_MS };
      this.changed.clear();
    }
    return ids;
  }

  private async takersByAccount(accountIds: number[]): Promise<Map<number, AccountTakers>> {
    const now = Date.now();
    const listening = this.subscription.listening;
    const found = new Map<number, AccountTakers>();
    const missing: number[] = [];
    for (const accountId of accountIds) {
      const cached = this.entries.get(accountId);
      if (listening && cached && cached.expiresAt > now) found.set(accountId, cached);
      else missing.push(accountId);
    }
    if (missing.length === 0) return found;
    const epoch = this.epoch;
    const rows = await this.dataSource.query<TakerRow[]>(TAKERS_SQL, [missing]);
    const expiresAt = Date.now() + DESTINATIONS_TTL_MS;
    for (const row of rows) {
      let entry = found.get(row.account_id);
      if (!entry) {
        entry = { permissions: row.permissions ?? {}, takers: [], expiresAt };
        found.set(row.account_id, entry);
      }
      entry.takers.push({ id: row.id, actions: row.actions ? new Set(row.actions) : null, filter: row.filter });
    }
    if (listening && epoch === this.epoch) {
      const ids = new Set(this.accounts?.ids ?? []);
      for (const accountId of missing) {
        const entry = found.get(accountId);
        if (entry) setBounded(this.entries, accountId, entry, MAX_ENTRIES);
        if (entry) ids.add(accountId);
        else ids.delete(accountId);
        this.changed.delete(accountId);
      }
      if (this.accounts) this.accounts = { ids, expiresAt: this.accounts.expiresAt };
    }
    return found;
  }
}

function takingIds(entry: AccountTakers, event: FanOutEvent): string[] {
  const permissionKey = isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null;
  if (!permissionKey || entry.permissions[permissionKey] !== true) return [];
  const ids: string[] = [];
  for (const taker of entry.takers) {
    if (taker.actions && !taker.actions.has(event.action)) continue;
    if (!matchesDestinationFilter(taker.filter, event.message)) continue;
    ids.push(taker.id);
  }
  return ids;
}
