import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NEW_EVENT_STEP_VALUES, newEventTallySql, preparedQuery, statementKeepsBooksSql } from '@app/persistence';
import { ApiError, type DeliveryJobData, firstDeliveryStep, firstDestinationStep, isDatabaseUnavailable, sqlState } from '@app/runtime';
import { DestinationDirectory } from './destination-directory';

export interface NewEvent {
  eventId: string;
  accountId: number;
  action: string;
  message: Record<string, unknown>;
}

/** What became of one event handed to `store`, in the order they were given; `destinations`: the extra destinations whose deliveries were stored with it. */
export type StoreOutcome =
  | { kind: 'accepted'; seq: string; destinations: readonly string[] }
  | { kind: 'duplicate' }
  | { kind: 'unknown_account' }
  | { kind: 'conflict' };

interface StoreRow {
  kind: 'inserted' | 'account' | 'existing';
  seq: string | null;
  event_id: string | null;
  account_id: number;
}

/**
 * One statement for any number of events: unnest the columns, keep rows whose account exists, claim
 * each id in `event_keys` (the service-wide unique key: events are partitioned by time, so no index on
 * them can be unique across days) with ON CONFLICT DO NOTHING, insert the events whose id was claimed
 * under the seq drawn with the claim, and in the same round trip report which accounts exist and who
 * already owned each conflicting id. The first valid item per id is the one that claims it. The account
 * check lives in the statement because a foreign-key violation would abort a multi-row insert as a
 * whole; single events use the same path so both behave identically. The final SELECT reads the
 * snapshot from before the insert, so `existing` rows are exactly the ones that were there already;
 * it looks up only the ids this statement did not claim (a probe per new id was a tenth of the statement).
 * It keeps the event books itself (stats/event-books.ts): its own claims are the key check, and it adds
 * its events to the status tallies; the triggers that do both for other writers stand aside for it.
 */
function storeSql(withDeliveries: boolean): string {
  return `
  WITH input AS (
    SELECT *
      FROM unnest($1::varchar[], $2::int[], $3::varchar[], $4::text[]${withDeliveries ? ', $5::text[]' : ''}) WITH ORDINALITY
           AS t(event_id, account_id, action, message, ${withDeliveries ? 'destinations, ' : ''}ord)
  ),
  known AS (
    SELECT id FROM accounts WHERE id IN (SELECT account_id FROM input) AND deleted_at IS NULL
  ),
  first_items AS (
    SELECT DISTINCT ON (event_id) * FROM input WHERE account_id IN (SELECT id FROM known) ORDER BY event_id, ord
  ),
  claimed AS (
    INSERT INTO event_keys (event_id, account_id, event_seq)
    SELECT event_id, account_id, next_event_seq() FROM (SELECT * FROM first_items ORDER BY ord) AS in_order
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id, event_seq
  ),
  inserted AS (
    INSERT INTO events (seq, event_id, account_id, action, message, status, next_attempt_at)
    SELECT c.event_seq, f.event_id, f.account_id, f.action, f.message::json, ${NEW_EVENT_STEP_VALUES}
      FROM claimed c JOIN first_items f USING (event_id)
     ORDER BY c.event_seq
    RETURNING seq, event_id, account_id, created_at, status, ${statementKeepsBooksSql} AS books_kept
  ),
  tallied AS (
    ${newEventTallySql('inserted AS src')}
  )${withDeliveries ? FAN_OUT_CTE : ''}
  SELECT 'inserted' AS kind, seq::text AS seq, event_id, account_id FROM inserted
  UNION ALL
  SELECT 'account', NULL, NULL, id FROM known
  UNION ALL
  SELECT 'existing', NULL, k.event_id, k.account_id FROM event_keys k
   WHERE k.event_id IN (SELECT event_id FROM first_items EXCEPT ALL SELECT event_id FROM claimed)`;
}

/**
 * When extra destinations take some of the events (CONTRACT §11): `$5` holds each input's destination
 * ids, space-separated, and the same statement (so the event's own transaction) stores the stored
 * events' deliveries; a duplicate or refused item adds none.
 */
const FAN_OUT_CTE = `,
  fanned AS (
    INSERT INTO destination_deliveries (event_seq, destination_id, account_id, status, next_attempt_at)
    SELECT i.seq, d.id, i.account_id, ${NEW_EVENT_STEP_VALUES}
      FROM inserted i JOIN first_items f USING (event_id)
     CROSS JOIN LATERAL unnest(string_to_array(f.destinations, ' ')) AS d(id)
  )`;

/** The first delivery steps of a stored event: the primary's, then one per extra destination that took it. */
export function firstSteps(outcome: { seq: string; destinations: readonly string[] }, accountId: number): DeliveryJobData[] {
  return [firstDeliveryStep(outcome.seq, accountId), ...outcome.destinations.map((id) => firstDestinationStep(outcome.seq, accountId, id))];
}

export const STORE_SQL = storeSql(false);
export const STORE_WITH_DELIVERIES_SQL = storeSql(true);

/** The SQLSTATE of an error thrown by node-postgres itself (a prepared statement bypasses TypeORM's wrapping). */
function driverSqlState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

@Injectable()
export class EventStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly destinations: DestinationDirectory,
  ) {}

  /**
   * Stores new events durably (committed when this resolves) and says, per event, whether it was
   * accepted, a duplicate of the same account's id, an id owned by another account, or for an
   * unknown account. Within one call the first event carrying an id claims it, like separate requests would.
   */
  async store(events: readonly NewEvent[]): Promise<StoreOutcome[]> {
    if (events.length === 0) return [];
    const takers = await this.destinations.takersOf(events);
    const columns = [
      events.map((event) => event.eventId),
      events.map((event) => event.accountId),
      events.map((event) => event.action),
      events.map((event) => JSON.stringify(event.message)),
    ];
    // Prepared: a group of single events is a handful of rows, and parsing and planning the statement
    // on every call was 15–20% of its backend CPU at 20 events a statement, 40% at one (bench/path-cost).
    const rows = takers
      ? await this.run<StoreRow>(STORE_WITH_DELIVERIES_SQL, [...columns, takers.map((ids) => ids.join(' '))], 'ingest-store-events-fanned')
      : await this.run<StoreRow>(STORE_SQL, columns, 'ingest-store-events');

    const knownAccounts = new Set<number>();
    const inserted = new Map<string, { seq: string; accountId: number }>();
    const owners = new Map<string, number>();
    for (const row of rows) {
      if (row.kind === 'account') knownAccounts.add(row.account_id);
      else if (row.kind === 'inserted' && row.event_id !== null && row.seq !== null) {
        inserted.set(row.event_id, { seq: row.seq, accountId: row.account_id });
        owners.set(row.event_id, row.account_id);
      } else if (row.kind === 'existing' && row.event_id !== null) owners.set(row.event_id, row.account_id);
    }

    // Not inserted and no owner in our snapshot: a concurrent request committed the id after the
    // snapshot was taken. Rare; one more query for all of them resolves who owns it now.
    const unresolved = events.filter((event) => knownAccounts.has(event.accountId) && !owners.has(event.eventId));
    if (unresolved.length > 0) {
      const found = await this.run<{ event_id: string; account_id: number }>(
        'SELECT event_id, account_id FROM event_keys WHERE event_id = ANY($1::varchar[])',
        [[...new Set(unresolved.map((event) => event.eventId))]],
      );
      for (const row of found) owners.set(row.event_id, row.account_id);
    }

    const claimed = new Set<string>();
    return events.map((event, position): StoreOutcome => {
      if (!knownAccounts.has(event.accountId)) return { kind: 'unknown_account' };
      const insertedRow = inserted.get(event.eventId);
      if (insertedRow && insertedRow.accountId === event.accountId && !claimed.has(event.eventId)) {
        // Rows were inserted in input order, so the first event of this account with this id is the stored one.
        claimed.add(event.eventId);
        return { kind: 'accepted', seq: insertedRow.seq, destinations: takers?.[position] ?? [] };
      }
      return owners.get(event.eventId) === event.accountId ? { kind: 'duplicate' } : { kind: 'conflict' };
    });
  }

  private async run<T extends object>(sql: string, parameters: unknown[], prepared?: string): Promise<T[]> {
    try {
      return prepared ? await preparedQuery<T>(this.dataSource, prepared, sql, parameters) : await this.dataSource.query<T[]>(sql, parameters);
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new ApiError(503, 'service_unavailable', 'the event store is unavailable; nothing was stored, retry later');
      }
      if ((sqlState(error) ?? driverSqlState(error)) === '23503') {
        // The account passed the in-statement check and vanished before commit; nothing was stored.
        throw new ApiError(409, 'conflict', 'an account was removed while its events were being stored; nothing was stored');
      }
      throw error;
    }
  }
}
