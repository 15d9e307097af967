import { Injectable } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { DEFAULT_PUSH_CONTENT_TYPE, type DeliveryOptions, type DeliveryOptionsChange, type PushContentType } from '@app/payloads';
import { defineStatement, PRIMARY_DESTINATION_ID, Sql } from '@app/persistence';
import { SecretBox } from '@app/runtime';

/** The seed's settings of an account's push URL, as the destination `primary` holds them (CONTRACT §2, §9). */
export interface PrimarySettings {
  pushUrl: string | null;
  contentType: string;
  ordering: DeliveryOptions['ordering'];
  maxPerSecond: number | null;
  paused: boolean;
  disabledAt: Date | null;
  disabledReason: string | null;
  previousSecretExpiresAt: Date | null;
}

interface PrimaryRow {
  target: string | null;
  content_type: string;
  ordering: DeliveryOptions['ordering'];
  max_per_second: number | null;
  paused: boolean;
  disabled_at: Date | null;
  disabled_reason: string | null;
  previous_secret_expires_at: Date | null;
}

const PRIMARY = `'${PRIMARY_DESTINATION_ID}'`;
const PRIMARY_COLUMNS = 'target, content_type, ordering, max_per_second, paused, disabled_at, disabled_reason, previous_secret_expires_at';

const READ_PRIMARY = defineStatement<{ accountId: number }, PrimaryRow>(
  'read-primary-destination',
  'plain',
  (p) => `SELECT ${PRIMARY_COLUMNS} FROM destinations WHERE account_id = ${p.accountId} AND id = ${PRIMARY} AND deleted_at IS NULL`,
);

/** PRIMARY_COLUMNS of the updated row where another table in the statement has columns of those names. */
const PRIMARY_COLUMNS_OF_D = PRIMARY_COLUMNS.split(', ').map((column) => `d.${column}`).join(', ');

/**
 * `before` is joined rather than read in RETURNING: read there it would run after the update, and FOR
 * UPDATE skips a row the statement itself changed, so it would never say the endpoint was disabled.
 *
 * A new URL (or the same one again) is a fresh start: it enables a disabled endpoint and restarts the
 * failure clock (CONTRACT §5). Answers whether it was disabled before.
 */
const SET_PRIMARY_URL = defineStatement<{ accountId: number; sealed: string; shown: string }, PrimaryRow & { was_disabled: boolean }>(
  'set-primary-url',
  'plain',
  (p) => `
  WITH before AS (
    SELECT id, disabled_at FROM destinations WHERE account_id = ${p.accountId} AND id = ${PRIMARY} AND deleted_at IS NULL FOR UPDATE
  )
  UPDATE destinations d
     SET target = ${p.sealed}, target_shown = ${p.shown}, failing_since = NULL, disabled_at = NULL, disabled_reason = NULL,
         version = d.version + 1, updated_at = now()
    FROM before b
   WHERE d.account_id = ${p.accountId} AND d.id = b.id AND d.deleted_at IS NULL
  RETURNING ${PRIMARY_COLUMNS_OF_D}, b.disabled_at IS NOT NULL AS was_disabled`,
);

const SET_PRIMARY_CONTENT_TYPE = defineStatement<{ accountId: number; contentType: string }, PrimaryRow>(
  'set-primary-content-type',
  'plain',
  (p) => `
  UPDATE destinations SET content_type = ${p.contentType}, version = version + 1, updated_at = now()
   WHERE account_id = ${p.accountId} AND id = ${PRIMARY} AND deleted_at IS NULL
  RETURNING ${PRIMARY_COLUMNS}`,
);

/** Options not sent keep their value, so concurrent changes of different options never undo each other. */
const SET_PRIMARY_OPTIONS = defineStatement<{ accountId: number; ordering: string | null; setPace: boolean; maxPerSecond: number | null }, PrimaryRow>(
  'set-primary-options',
  'plain',
  (p) => `
  UPDATE destinations
     SET ordering = COALESCE(${p.ordering}, ordering),
         max_per_second = CASE WHEN ${p.setPace}::boolean THEN ${p.maxPerSecond}::integer ELSE max_per_second END,
         version = version + 1, updated_at = now()
   WHERE account_id = ${p.accountId} AND id = ${PRIMARY} AND deleted_at IS NULL
  RETURNING ${PRIMARY_COLUMNS}`,
);

/** Every account has its primary from its creation (CONTRACT §11): no target until set_url. */
const CREATE_PRIMARY = defineStatement<{ accountId: number; signingSecret: string }>(
  'create-primary-destination',
  'plain',
  (p) => `
  INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, signing_secret)
  VALUES (${PRIMARY}, ${p.accountId}, 'webhook', NULL, NULL, '${DEFAULT_PUSH_CONTENT_TYPE}', 'udesk', ${p.signingSecret})`,
);

/**
 * The account's destination `primary` as the seed's operations see it: set_url, set_push_content_type,
 * set_delivery_options and push_settings read and write its row like any destination's, through here.
 * Each write answers the row as it stands after it (null: no such account).
 */
@Injectable()
export class PrimaryDestination {
  constructor(
    private readonly sql: Sql,
    private readonly secrets: SecretBox,
  ) {}

  /** Inside the account's creation (its transaction): its primary, signing with the account's first secret. */
  async create(runner: QueryRunner, accountId: number, signingSecret: string): Promise<void> {
    await this.sql.rows(CREATE_PRIMARY, { accountId, signingSecret: this.secrets.seal(signingSecret) }, runner);
  }

  async read(accountId: number): Promise<PrimarySettings | null> {
    return this.settingsOf(await this.sql.first(READ_PRIMARY, { accountId }));
  }

  async setUrl(accountId: number, pushUrl: string): Promise<(PrimarySettings & { wasDisabled: boolean }) | null> {
    // The push URL may carry a password: sealed like every destination's target; shown as the account set it.
    const row = await this.sql.first(SET_PRIMARY_URL, { accountId, sealed: this.secrets.seal(pushUrl), shown: pushUrl });
    const settings = this.settingsOf(row);
    return settings && { ...settings, wasDisabled: row?.was_disabled === true };
  }

  async setContentType(accountId: number, contentType: PushContentType): Promise<PrimarySettings | null> {
    return this.settingsOf(await this.sql.first(SET_PRIMARY_CONTENT_TYPE, { accountId, contentType }));
  }

  async setOptions(accountId: number, changes: DeliveryOptionsChange): Promise<PrimarySettings | null> {
    const row = await this.sql.first(SET_PRIMARY_OPTIONS, {
      accountId,
      ordering: changes.ordering ?? null,
      setPace: changes.max_per_second !== undefined,
      maxPerSecond: changes.max_per_second ?? null,
    });
    return this.settingsOf(row);
  }

  private settingsOf(row: PrimaryRow | null): PrimarySettings | null {
    if (!row) return null;
    return {
      pushUrl: this.secrets.openNullable(row.target),
      contentType: row.content_type,
      ordering: row.ordering,
      maxPerSecond: row.max_per_second,
      paused: row.paused,
      disabledAt: row.disabled_at,
      disabledReason: row.disabled_reason,
      previousSecretExpiresAt: row.previous_secret_expires_at,
    };
  }
}

/** The delivery options as every API shows them (CONTRACT §9). */
export function deliveryOptionsOf(settings: Pick<PrimarySettings, 'ordering' | 'maxPerSecond'> | null): DeliveryOptions {
  return settings ? { ordering: settings.ordering, max_per_second: settings.maxPerSecond } : { ordering: 'none', max_per_second: null };
}
