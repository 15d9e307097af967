import { Injectable } from '@nestjs/common';
import { Sql, storeEvents } from '@app/persistence';
import { isEventAction, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { type DeliveryJobData, DomainError, firstDeliveryStep, isDatabaseUnavailable, sqlState } from '@app/runtime';
import { DestinationDirectory } from './destination-directory';

export interface NewEvent {
  eventId: string;
  accountId: number;
  action: string;
  message: Record<string, unknown>;
}

/** What became of one event handed to `store`, in the order they were given; `queued`: the destinations whose delivery of it needs a job. */
export type StoreOutcome =
  | { kind: 'accepted'; seq: string; queued: readonly string[] }
  | { kind: 'duplicate' }
  | { kind: 'unknown_account' }
  | { kind: 'conflict' };

/** The first delivery steps of a stored event: one per destination whose delivery was stored queued. */
export function firstSteps(outcome: { seq: string; queued: readonly string[] }, accountId: number): DeliveryJobData[] {
  return outcome.queued.map((destinationId) => firstDeliveryStep(outcome.seq, accountId, destinationId));
}

/** The SQLSTATE of an error thrown by node-postgres itself (a prepared statement bypasses TypeORM's wrapping). */
function driverSqlState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

@Injectable()
export class EventStore {
  constructor(
    private readonly sql: Sql,
    private readonly destinations: DestinationDirectory,
  ) {}

  /**
   * Stores new events durably with their deliveries (committed when this resolves; storeEvents.STORE_EVENTS) and
   * says, per event, whether it was accepted (and which of its deliveries need a job), a duplicate of
   * the same account's id, an id owned by another account, or for an unknown account. Within one call
   * the first event carrying an id claims it, like separate requests would.
   */
  async store(events: readonly NewEvent[], test = false): Promise<StoreOutcome[]> {
    if (events.length === 0) return [];
    const takers = test ? null : await this.destinations.takersOf(events);
    const toStore: storeEvents.EventToStore[] = events.map((event, position) => ({
      eventId: event.eventId,
      accountId: event.accountId,
      action: event.action,
      messageText: JSON.stringify(event.message),
      permissionKey: isEventAction(event.action) ? PERMISSION_KEY_BY_ACTION[event.action] : null,
      test,
      takers: takers?.[position] ?? [],
    }));
    const rows = await this.guarded(() => this.sql.rows(storeEvents.STORE_EVENTS, storeEvents.storeEventsParams(toStore)));

    const knownAccounts = new Set<number>();
    const inserted = new Map<string, { seq: string; accountId: number }>();
    const queued = new Map<string, string[]>();
    const owners = new Map<string, number>();
    for (const row of rows) {
      if (row.kind === 'account') knownAccounts.add(row.account_id);
      else if (row.kind === 'inserted' && row.event_id !== null && row.seq !== null) {
        inserted.set(row.event_id, { seq: row.seq, accountId: row.account_id });
        owners.set(row.event_id, row.account_id);
      } else if (row.kind === 'queued' && row.seq !== null && row.destination_id !== null) {
        const destinations = queued.get(row.seq) ?? [];
        destinations.push(row.destination_id);
        queued.set(row.seq, destinations);
      } else if (row.kind === 'existing' && row.event_id !== null) owners.set(row.event_id, row.account_id);
    }

    // Not inserted and no owner in our snapshot: a concurrent request committed the id after the
    // snapshot was taken. Rare; one more query for all of them resolves who owns it now.
    const unresolved = events.filter((event) => knownAccounts.has(event.accountId) && !owners.has(event.eventId));
    if (unresolved.length > 0) {
      const found = await this.guarded(() => this.sql.rows(storeEvents.EVENT_ID_OWNERS, { eventIds: [...new Set(unresolved.map((event) => event.eventId))] }));
      for (const row of found) owners.set(row.event_id, row.account_id);
    }

    const claimed = new Set<string>();
    return events.map((event): StoreOutcome => {
      if (!knownAccounts.has(event.accountId)) return { kind: 'unknown_account' };
      const insertedRow = inserted.get(event.eventId);
      if (insertedRow && insertedRow.accountId === event.accountId && !claimed.has(event.eventId)) {
        // Rows were inserted in input order, so the first event of this account with this id is the stored one.
        claimed.add(event.eventId);
        return { kind: 'accepted', seq: insertedRow.seq, queued: queued.get(insertedRow.seq) ?? [] };
      }
      return owners.get(event.eventId) === event.accountId ? { kind: 'duplicate' } : { kind: 'conflict' };
    });
  }

  private async guarded<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new DomainError('service_unavailable', 'the event store is unavailable; nothing was stored, retry later');
      }
      if ((sqlState(error) ?? driverSqlState(error)) === '23503') {
        // The account passed the in-statement check and vanished before commit; nothing was stored.
        throw new DomainError('conflict', 'an account was removed while its events were being stored; nothing was stored');
      }
      throw error;
    }
  }
}
