import { randomBytes } from 'node:crypto';
import type { OperationalAction, OperationalMessage } from '@app/payloads';
import { type DeliveryJobData, firstDeliveryStep, type RedisClient, type RedisKeys } from '@app/runtime';
import { defineStatement } from '../statements/statement';
import type { Sql } from '../statements/sql.service';
import { STORE_EVENTS, storeEventsParams } from './store-events.statement';

/** At most one of each operational action per destination in this window (CONTRACT §14). */
export const OPERATIONAL_EVENT_WINDOW_MS = 10 * 60_000;

/** The account's other live destinations whose `actions` list names the action: the only ones an operational event goes to. */
const OPERATIONAL_TAKERS = defineStatement<{ accountId: number; aboutId: string; action: string }, { id: string }>(
  'operational-event-takers',
  'plain',
  (p) => `
  SELECT id FROM destinations
   WHERE account_id = ${p.accountId} AND id <> ${p.aboutId} AND deleted_at IS NULL AND ${p.action}::text = ANY (actions)`,
);

/**
 * The service tells an account about its own destinations (CONTRACT §14): an event of the account,
 * stored like any other (admin API, portal, pull feed), subject `destination:<id>`, delivered only to the
 * account's other destinations that list its action, never to the one it is about, and at most one of
 * each action per destination in OPERATIONAL_EVENT_WINDOW_MS (a Redis mark shared by every process).
 * Emitting never throws: telling the account is never worth failing the delivery that noticed.
 */
export class OperationalEvents {
  constructor(
    private readonly sql: Sql,
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly enqueue: (steps: DeliveryJobData[]) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Answers the new event's id, or null when one of its kind went out within the window (or it could not be stored). */
  async emit(about: { accountId: number; destinationId: string; shownTarget: string | null }, action: OperationalAction, reason: string): Promise<string | null> {
    try {
      const key = this.keys.operationalEvent(about.accountId, about.destinationId, action);
      if ((await this.redis.set(key, '1', 'PX', OPERATIONAL_EVENT_WINDOW_MS, 'NX')) === null) return null;
      const takers = await this.sql.rows(OPERATIONAL_TAKERS, { accountId: about.accountId, aboutId: about.destinationId, action });
      const message: OperationalMessage = { destination_id: about.destinationId, target: about.shownTarget, reason, at: new Date().toISOString() };
      const eventId = `op_${randomBytes(16).toString('hex')}`;
      const rows = await this.sql.rows(
        STORE_EVENTS,
        storeEventsParams([
          { eventId, accountId: about.accountId, action, messageText: JSON.stringify(message), permissionKey: null, test: false, operational: true, takers: takers.map((row) => row.id) },
        ]),
      );
      const steps = rows.filter((row) => row.kind === 'queued' && row.seq !== null && row.destination_id !== null);
      await this.enqueue(steps.map((row) => firstDeliveryStep(row.seq as string, about.accountId, row.destination_id as string)));
      return eventId;
    } catch (error) {
      this.onError(error);
      return null;
    }
  }
}
