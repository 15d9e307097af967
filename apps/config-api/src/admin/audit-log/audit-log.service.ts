import { Injectable } from '@nestjs/common';
import { audit, parseTimestamp, Sql } from '@app/persistence';
import type { AuditEntryView, Page } from '@app/payloads';
import { invalidQuery } from '@app/runtime';
import { AUDIT_DEFAULT_LIMIT, type ListAuditQueryDto } from './audit-list.dto';

const CURSOR_PATTERN = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|(\d{1,18})$/;

/** The last entry of a page, to the microsecond, as an opaque string. */
function cursorOf(row: audit.AuditRow): string {
  return Buffer.from(`${row.at_key}|${row.id}`).toString('base64url');
}

function readCursor(cursor: string): { at: string; id: string } {
  const match = CURSOR_PATTERN.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw invalidQuery([{ path: 'cursor', problem: 'cursor must be a next_cursor value returned by this API' }]);
  return { at: match[1], id: match[2] };
}

function toView(row: audit.AuditRow): AuditEntryView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    role: row.role,
    via: row.via,
    action: row.action,
    account_id: row.account_id,
    target: row.target,
    status: row.status,
    ip: row.ip,
    request_id: row.request_id,
  };
}

/** Reads the audit log, newest first, in cursor pages that never shift as entries arrive. */
@Injectable()
export class AuditLogService {
  constructor(private readonly sql: Sql) {}

  async list(query: ListAuditQueryDto): Promise<Page<AuditEntryView>> {
    const limit = query.limit ?? AUDIT_DEFAULT_LIMIT;
    const after = query.cursor === undefined ? null : readCursor(query.cursor);
    const rows = await this.sql.rows(audit.LIST_AUDIT_ENTRIES, {
      since: query.since === undefined ? null : parseTimestamp(query.since),
      until: query.until === undefined ? null : parseTimestamp(query.until),
      actor: query.actor ?? null,
      action: query.action ?? null,
      accountId: query.account_id ?? null,
      afterAt: after?.at ?? null,
      afterId: after?.id ?? null,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return { items: page.map(toView), next_cursor: rows.length > limit ? cursorOf(page[page.length - 1]) : null };
  }
}
