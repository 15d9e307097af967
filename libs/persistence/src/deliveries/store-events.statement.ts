import { defineStatement } from '../statements/statement';
import { NO_ENDPOINT_ERROR, PRIMARY_DESTINATION_ID } from './delivery-lifecycle';

/** One event handed to STORE_EVENTS. */
export interface EventToStore {
  eventId: string;
  accountId: number;
  action: string;
  /** The message's JSON text, stored byte for byte (`json`, not `jsonb`: the sender's key order is delivered). */
  messageText: string;
  /** The account permission that lets the action through (null: an action no permission names). */
  permissionKey: string | null;
  /** A test event (send_test_event): its primary takes it whatever the permission. */
  test: boolean;
  /**
   * The service's own event about one of the account's destinations (CONTRACT §14): not subject to
   * permissions, taken only by the destinations in `takers`; the primary's delivery is stored filtered.
   */
  operational?: boolean;
  /** Extra destinations whose `actions` and `filter` take it (ingest's DestinationDirectory); the statement checks the permission. */
  takers: readonly string[];
}

export interface StoredRow {
  /** `inserted`: an event stored; `queued`: one of its deliveries that needs a job; `account`: an account that exists; `existing`: an id someone already owned. */
  kind: 'inserted' | 'queued' | 'account' | 'existing';
  seq: string | null;
  event_id: string | null;
  account_id: number;
  destination_id: string | null;
}

interface StoreParams {
  eventIds: string[];
  accountIds: number[];
  actions: string[];
  messages: string[];
  permissionKeys: (string | null)[];
  tests: boolean[];
  operational: boolean[];
  takers: (string | null)[];
}

export function storeEventsParams(events: readonly EventToStore[]): StoreParams {
  return {
    eventIds: events.map((event) => event.eventId),
    accountIds: events.map((event) => event.accountId),
    actions: events.map((event) => event.action),
    messages: events.map((event) => event.messageText),
    permissionKeys: events.map((event) => event.permissionKey),
    tests: events.map((event) => event.test),
    operational: events.map((event) => event.operational === true),
    takers: events.map((event) => (event.takers.length > 0 ? event.takers.join(' ') : null)),
  };
}

/**
 * Any number of events in one statement, with everything they owe: keep the items whose account exists
 * (a foreign-key error would abort the whole batch), claim each id in `event_keys` (the service-wide
 * unique key: events are partitioned by time, so no index on them can be unique across days; the first
 * item carrying an id claims it), insert the events whose id was claimed, decide every destination's
 * delivery the same way (the account's permission for the action, a test event passing it; the extra
 * destinations ingest found taking it by their actions and filter; the primary `no_endpoint` without a
 * target and `filtered` without the permission, the others not stored at all then), insert those
 * deliveries with their deadline (the primary's also with its first status, under which the books count
 * the event from its row: books.COUNT_ACCEPTED, so no book entry is appended) and the open rows of the
 * ones whose destination orders by subject; and in the same round trip answer which accounts exist and
 * who already owned each conflicting id. The final SELECT reads the snapshot from before the insert, so
 * `existing` rows are exactly the ids that were there already.
 *
 * Kept plan (GenericPlanPool): a group of single events is a handful of rows, and parsing and planning
 * the statement on every call was a fifth of its cost at one event a statement; left to choose,
 * PostgreSQL planned this shape for its values on every call (1,390 against 584 µs a statement).
 *
 * Linear in the group whatever plan PostgreSQL keeps. A generic plan guesses 10 rows for an unnested
 * array, so any join between two of the statement's own row sets runs as a nested loop: joining the
 * claimed ids back to the items, and the events to the items once per destination in the system, took
 * 2 of a 500-event batch's 2.2 s with 23 destinations. So the seq is drawn before the claim and every
 * later step reads `numbered`; the claimed rows are told apart only when some id was taken already; the
 * account, its settings and its destinations are looked up per row by their keys (LATERAL, OFFSET 0 so the
 * planner keeps them per row), never scanned: the cost does not grow with the accounts the service holds.
 * So are the owners of repeated ids: a plan kept while event_keys was small scanned all of it for them,
 * on every statement with a repeated id, until the table's next ANALYZE replaced the plan.
 */
export const STORE_EVENTS = defineStatement<StoreParams, StoredRow>(
  'store-events',
  'generic',
  (p) => `
  WITH input AS (
    SELECT *
      FROM unnest(${p.eventIds}::varchar[], ${p.accountIds}::int[], ${p.actions}::varchar[], ${p.messages}::text[],
                  ${p.permissionKeys}::text[], ${p.tests}::bool[], ${p.operational}::bool[], ${p.takers}::text[]) WITH ORDINALITY
           AS t(event_id, account_id, action, message, permission_key, test, operational, takers, ord)
  ),
  known AS (
    SELECT a.id FROM (SELECT DISTINCT account_id FROM input) AS asked
     CROSS JOIN LATERAL (SELECT id FROM accounts WHERE id = asked.account_id AND deleted_at IS NULL OFFSET 0) AS a
  ),
  first_items AS (
    SELECT DISTINCT ON (event_id) * FROM input WHERE account_id IN (SELECT id FROM known) ORDER BY event_id, ord
  ),
  numbered AS (
    SELECT f.event_id, f.account_id, f.action, f.message::json AS message, f.permission_key, f.test, f.operational, f.takers,
           next_event_seq() AS seq, now() AS created_at
      FROM (SELECT * FROM first_items ORDER BY ord) AS f
  ),
  claimed AS (
    INSERT INTO event_keys (event_id, account_id, event_seq)
    SELECT event_id, account_id, seq FROM numbered
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id, event_seq
  ),
  fresh AS (
    SELECT * FROM numbered
     WHERE (SELECT count(*) FROM claimed) = (SELECT count(*) FROM numbered) OR seq IN (SELECT event_seq FROM claimed)
  ),
  inserted AS (
    INSERT INTO events (seq, event_id, account_id, action, message, test, created_at)
    SELECT seq, event_id, account_id, action, message, test, created_at FROM fresh ORDER BY seq
    RETURNING seq, event_id, account_id
  ),
  taking AS (
    SELECT f.seq, f.account_id, f.created_at, d.id AS destination_id, d.ordering, d.expire_after_ms, f.permission_key, f.operational,
           callback_subject(f.action, f.message) AS subject,
           CASE WHEN f.operational THEN CASE WHEN d.id = '${PRIMARY_DESTINATION_ID}' THEN 'filtered' ELSE 'queued' END
                WHEN d.target IS NULL THEN 'no_endpoint'
                WHEN f.test OR COALESCE((s.permissions ->> f.permission_key)::boolean, false) THEN 'queued'
                ELSE 'filtered' END AS status
      FROM fresh f
      LEFT JOIN LATERAL (SELECT permissions FROM callback_settings WHERE account_id = f.account_id OFFSET 0) AS s ON true
      CROSS JOIN LATERAL (SELECT id, ordering, expire_after_ms, target FROM destinations
                           WHERE account_id = f.account_id AND deleted_at IS NULL
                             AND (id = '${PRIMARY_DESTINATION_ID}' OR id = ANY (string_to_array(f.takers, ' '))) OFFSET 0) AS d
  ),
  kept AS (
    SELECT *, CASE WHEN status = 'queued' AND expire_after_ms IS NOT NULL
                   THEN created_at + expire_after_ms * interval '1 millisecond' END AS expires_at
      FROM taking WHERE status = 'queued' OR destination_id = '${PRIMARY_DESTINATION_ID}'
  ),
  delivering AS (
    INSERT INTO deliveries (event_seq, destination_id, account_id, status, first_status, next_attempt_at, expires_at, last_error)
    SELECT seq, destination_id, account_id, status, CASE WHEN destination_id = '${PRIMARY_DESTINATION_ID}' THEN status END,
           CASE WHEN status = 'queued' THEN created_at END, expires_at,
           CASE WHEN status = 'no_endpoint' THEN '${NO_ENDPOINT_ERROR}'
                WHEN status = 'filtered' AND operational THEN 'operational events go only to the destinations whose actions name them'
                WHEN status = 'filtered' THEN 'permission ' || COALESCE(permission_key, '(none)') || ' is off' END
      FROM kept
  ),
  ordered AS (
    INSERT INTO open_deliveries (event_seq, destination_id, account_id, subject, due_at, expires_at)
    SELECT seq, destination_id, account_id, subject, created_at, expires_at
      FROM kept WHERE status = 'queued' AND ordering = 'subject' AND subject IS NOT NULL
  )
  SELECT 'inserted' AS kind, seq::text AS seq, event_id, account_id, NULL AS destination_id FROM inserted
  UNION ALL
  SELECT 'queued', seq::text, NULL, account_id, destination_id FROM kept WHERE status = 'queued'
  UNION ALL
  SELECT 'account', NULL, NULL, id, NULL FROM known
  UNION ALL
  SELECT 'existing', NULL, k.event_id, k.account_id, NULL
    FROM (SELECT event_id FROM first_items EXCEPT ALL SELECT event_id FROM claimed) AS taken
   CROSS JOIN LATERAL (SELECT event_id, account_id FROM event_keys WHERE event_id = taken.event_id OFFSET 0) AS k`,
);

/** Who owns these event ids now (the rare ids a concurrent request committed after the store's snapshot). */
export const EVENT_ID_OWNERS = defineStatement<{ eventIds: string[] }, { event_id: string; account_id: number }>(
  'event-id-owners',
  'plain',
  (p) => `SELECT event_id, account_id FROM event_keys WHERE event_id = ANY(${p.eventIds}::varchar[])`,
);
