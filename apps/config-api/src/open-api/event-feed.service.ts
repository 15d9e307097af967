import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import { EVENT_ACTIONS, PERMISSION_KEY_BY_ACTION } from '@app/payloads';
import { preparedQuery } from '@app/persistence';
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

interface FeedRow extends QueryResultRow {
  txid: string;
  seq: string;
  event_id: string;
  action: string;
  message: Record<string, unknown>;
  created_at: Date;
}

/** The expression events_feed_idx is built on (rows from before the feed have no txid: read as 0). */
const TXID = `COALESCE(txid, '0'::xid8)`;

/**
 * Named, so each connection plans it once: no partition can be pruned (the order is not seq's), and
 * planning across a month of daily partitions cost several times the scan itself (docs/self-service.md).
 */
const PAGE_STATEMENT = 'open-api-feed-page';

/**
 * One page, oldest first after the cursor, of the rows whose inserting transaction is older than every
 * transaction still running (see migration 1764800000000): those can no longer be joined by a row that
 * sorts before them. Test events are in the feed whatever the permissions, as they are pushed whatever
 * the permissions.
 */
const PAGE_SQL = `
  SELECT ${TXID}::text AS txid, seq::text AS seq, event_id, action, message, created_at
    FROM events
   WHERE account_id = $1
     AND (${TXID}, seq) > ($2::xid8, $3::bigint)
     AND ${TXID} < pg_snapshot_xmin(pg_current_snapshot())
     AND (action = ANY($4::varchar[]) OR test)
     AND NOT erased
   ORDER BY ${TXID}, events.seq
   LIMIT $5`;

/** The pull feed, GET /open_api_v1/events (CONTRACT §10). */
@Injectable()
export class EventFeedService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async page(accountId: number, after: FeedCursor, limit: number): Promise<FeedPage> {
    const allowed = await this.allowedActions(accountId);
    const rows = await preparedQuery<FeedRow>(this.dataSource, PAGE_STATEMENT, PAGE_SQL, [accountId, after.txid, after.seq, allowed, limit]);
    const last = rows.at(-1);
    return {
      code: OpenApiCode.ok,
      message: 'OK',
      items: rows.map((row) => ({ event_id: row.event_id, action: row.action, message: row.message, created_at: row.created_at.toISOString() })),
      next_cursor: formatFeedCursor(last ? { txid: last.txid, seq: last.seq } : after),
    };
  }

  private async allowedActions(accountId: number): Promise<string[]> {
    const rows = await this.dataSource.query<{ permissions: Record<string, boolean> | null }[]>(
      'SELECT permissions FROM callback_settings WHERE account_id = $1',
      [accountId],
    );
    const permissions = rows[0]?.permissions ?? {};
    return EVENT_ACTIONS.filter((action) => permissions[PERMISSION_KEY_BY_ACTION[action]] === true);
  }
}
