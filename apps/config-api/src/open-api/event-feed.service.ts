import { Injectable } from '@nestjs/common';
import { EVENT_ACTIONS, OPERATIONAL_ACTIONS, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { defineStatement, Sql } from '@app/persistence';
import { OpenApiCode } from './open-api-errors';
import { type FeedCursor, formatFeedCursor } from './feed-cursor';

export interface FeedItem {
  event_id: string;
  action: string;
  message: Record<string, unknown>;
  created_at: string;
}

export interface FeedPage {
  code: typeof OpenApiCode.ok;
  message: 'OK';
  items: FeedItem[];
  next_cursor: string;
}

/** A row looked at: its position, and, when the permissions allow it, the event. */
type FeedRow = { txid: string; seq: string } & (
    | { allowed: true; event_id: string; action: string; message: Record<string, unknown>; created_at: Date }
    | { allowed: false }
  );

/** The expression events_feed_idx is built on (rows from before the feed have no txid: read as 0). */
const TXID = `COALESCE(txid, '0'::xid8)`;

/**
 * Rows a poll looks at, at most, whatever the permissions: a poll costs the same however few actions the
 * account allows and however long its history, and the cursor moves past every row looked at.
 */
export const FEED_SCAN_ROWS = 5000;

interface PageParams {
  accountId: number;
  afterTxid: string;
  afterSeq: string;
  allowed: string[];
  limit: number;
  scan: number;
}

/**
 * One page, oldest first after the cursor, of the rows whose inserting transaction is older than every
 * transaction still running (see migration 1764800000000): those can no longer be joined by a row that
 * sorts before them. At most FEED_SCAN_ROWS rows are looked at; `taken` counts the allowed ones among them
 * (test events are allowed whatever the permissions, as they are pushed whatever the permissions; operational
 * events arrive in `allowed`, as no permission governs them), and the page is every row looked at up to the
 * (limit + 1)-th allowed one, which PostgreSQL stops at (the run condition of the window). Rows left out by the permissions come back as their position only.
 *
 * Prepared, so each connection plans it once: no partition can be pruned (the order is not seq's), and
 * planning across a month of daily partitions cost several times the scan itself (docs/self-service.md).
 */
const FEED_PAGE = defineStatement<PageParams, FeedRow>(
  'open-api-feed-page',
  'prepared',
  (p) => `
  SELECT txid::text AS txid, seq::text AS seq, allowed,
         CASE WHEN allowed THEN event_id END AS event_id, CASE WHEN allowed THEN action END AS action,
         CASE WHEN allowed THEN message END AS message, CASE WHEN allowed THEN created_at END AS created_at
    FROM (SELECT looked.*, count(*) FILTER (WHERE allowed) OVER (ORDER BY txid, seq) AS taken
            FROM (SELECT ${TXID} AS txid, seq, (action = ANY(${p.allowed}::varchar[]) OR test) AND NOT erased AS allowed, event_id, action, message, created_at
                    FROM events
                   WHERE account_id = ${p.accountId}
                     AND (${TXID}, seq) > (${p.afterTxid}::xid8, ${p.afterSeq}::bigint)
                     AND ${TXID} < pg_snapshot_xmin(pg_current_snapshot())
                   ORDER BY ${TXID}, events.seq
                   LIMIT ${p.scan}) looked) counted
   WHERE taken <= ${p.limit}
   ORDER BY counted.txid, counted.seq`,
);

const PERMISSIONS = defineStatement<{ accountId: number }, { permissions: Record<string, boolean> | null }>(
  'open-api-feed-permissions',
  'prepared',
  (p) => `SELECT permissions FROM callback_settings WHERE account_id = ${p.accountId}`,
);

/** The pull feed, GET /open_api_v1/events (CONTRACT §10). */
@Injectable()
export class EventFeedService {
  constructor(private readonly sql: Sql) {}

  async page(accountId: number, after: FeedCursor, limit: number): Promise<FeedPage> {
    const allowed = await this.allowedActions(accountId);
    const rows = await this.sql.rows(FEED_PAGE, { accountId, afterTxid: after.txid, afterSeq: after.seq, allowed, limit, scan: FEED_SCAN_ROWS });
    const items: FeedItem[] = [];
    for (const row of rows) {
      if (row.allowed) items.push({ event_id: row.event_id, action: row.action, message: row.message, created_at: row.created_at.toISOString() });
    }
    const last = rows.at(-1);
    return { code: OpenApiCode.ok, message: 'OK', items, next_cursor: formatFeedCursor(last ? { txid: last.txid, seq: last.seq } : after) };
  }

  /** The actions the permissions allow, and the operational ones, which no permission governs (CONTRACT §14). */
  private async allowedActions(accountId: number): Promise<string[]> {
    const row = await this.sql.first(PERMISSIONS, { accountId });
    const permissions = row?.permissions ?? {};
    return [...EVENT_ACTIONS.filter((action) => permissions[PERMISSION_KEY_BY_ACTION[action]] === true), ...OPERATIONAL_ACTIONS];
  }
}
