import { defineStatement, type Sql } from '@app/persistence';
import { DomainError } from '@app/runtime';

/** An account that exists and is not being deleted: one row, or none. */
const LIVE_ACCOUNT = defineStatement<{ accountId: number }, { live: number }>(
  'admin-live-account',
  'plain',
  (p) => `SELECT 1 AS live FROM accounts WHERE id = ${p.accountId} AND deleted_at IS NULL`,
);

/** 404 naming the account unless it exists (and is not being deleted), so every admin call taking an account id refuses alike. */
export async function requireAccount(sql: Sql, accountId: number): Promise<void> {
  if (!(await sql.first(LIVE_ACCOUNT, { accountId }))) throw new DomainError('not_found', `account ${accountId} does not exist`);
}
