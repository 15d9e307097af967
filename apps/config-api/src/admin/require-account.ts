import type { DataSource } from 'typeorm';
import { DomainError } from '@app/runtime';

/** 404 naming the account unless it exists (and is not being deleted), so every admin call taking an account id refuses alike. */
export async function requireAccount(dataSource: DataSource, accountId: number): Promise<void> {
  const rows = await dataSource.query<unknown[]>('SELECT 1 FROM accounts WHERE id = $1 AND deleted_at IS NULL', [accountId]);
  if (rows.length === 0) throw new DomainError('not_found', `account ${accountId} does not exist`);
}
