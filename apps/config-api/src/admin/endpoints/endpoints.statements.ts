import { defineStatement, PRIMARY_DESTINATION_ID } from '@app/persistence';

export interface SettingsRow {
  account_id: number;
  email: string;
  push_url: string;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

/** The push URL is the primary destination's target as the account set it (target_shown; the sealed copy is never opened here). */
const SETTINGS_COLUMNS = `s.account_id, a.email, s.target_shown AS push_url, s.disabled_at, s.disabled_reason
  FROM destinations s JOIN accounts a ON a.id = s.account_id AND s.id = '${PRIMARY_DESTINATION_ID}' AND s.deleted_at IS NULL`;

/** The push URLs of the accounts whose endpoints the workers' index lists as open. */
export const PUSH_URLS_OF = defineStatement<{ accountIds: number[] }, SettingsRow>(
  'admin-endpoints-push-urls',
  'plain',
  (p) => `SELECT ${SETTINGS_COLUMNS} WHERE s.account_id = ANY(${p.accountIds}::bigint[]) AND s.target_shown IS NOT NULL`,
);

/** The most recently disabled push URLs, through the partial index on disabled_at. */
export const DISABLED_PUSH_URLS = defineStatement<{ limit: number }, SettingsRow>(
  'admin-endpoints-disabled',
  'plain',
  (p) => `SELECT ${SETTINGS_COLUMNS} WHERE s.disabled_at IS NOT NULL AND s.target_shown IS NOT NULL ORDER BY s.disabled_at DESC LIMIT ${p.limit}`,
);
