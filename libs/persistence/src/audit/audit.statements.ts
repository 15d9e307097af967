import type { AuditEntryView } from '@app/payloads';
import { defineStatement } from '../statements/statement';

/** One audit entry as written: who, how, what, on which account and object, and the status answered. */
export interface AuditEntryParams {
  actor: string;
  role: string | null;
  via: 'token' | 'oidc' | 'open_api' | 'portal';
  action: string;
  accountId: number | null;
  target: string | null;
  status: number;
  ip: string | null;
  requestId: string | null;
}

export const INSERT_AUDIT_ENTRY = defineStatement<AuditEntryParams>(
  'insert_audit_entry',
  'prepared',
  (p) => `
    INSERT INTO audit_log (actor, role, via, action, account_id, target, status, ip, request_id)
    VALUES (${p.actor}, ${p.role}, ${p.via}, ${p.action}, ${p.accountId}, ${p.target}, ${p.status}, ${p.ip}, ${p.requestId})`,
);

export interface AuditListParams {
  since: Date | null;
  until: Date | null;
  actor: string | null;
  action: string | null;
  accountId: number | null;
  /** The last entry of the previous page: its `at` to the microsecond (text) and id. */
  afterAt: string | null;
  afterId: string | null;
  limit: number;
}

/** An entry as the admin API shows it (the table's checks hold role and via to the view's values), with `at` as read and to the microsecond for the cursor. */
export interface AuditRow extends Omit<AuditEntryView, 'at'> {
  at: Date;
  at_key: string;
}

/**
 * Newest first, filters optional. Plain: sent with its values each time, so PostgreSQL plans with them
 * (an absent filter's `IS NULL` folds away and the filter's own index serves the rest).
 */
export const LIST_AUDIT_ENTRIES = defineStatement<AuditListParams, AuditRow>(
  'list_audit_entries',
  'plain',
  (p) => `
    SELECT id::text AS id, at, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key,
           actor, role, via, action, account_id, target, status, ip, request_id
      FROM audit_log
     WHERE (${p.since}::timestamptz IS NULL OR at >= ${p.since}::timestamptz)
       AND (${p.until}::timestamptz IS NULL OR at < ${p.until}::timestamptz)
       AND (${p.actor}::text IS NULL OR actor = ${p.actor}::text)
       AND (${p.action}::text IS NULL OR action = ${p.action}::text)
       AND (${p.accountId}::int IS NULL OR account_id = ${p.accountId}::int)
       AND (${p.afterAt}::timestamptz IS NULL OR (at, id) < (${p.afterAt}::timestamptz, ${p.afterId}::bigint))
     ORDER BY at DESC, id DESC
     LIMIT ${p.limit}`,
);
