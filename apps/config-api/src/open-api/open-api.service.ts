import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { completePermissions, DEFAULT_PUSH_CONTENT_TYPE, type DeliveryOptions, type Permissions, type PushContentType } from '@app/payloads';
import { CallbackSettings } from '@app/persistence';
import { announceStoredSettingsChange, ENVIRONMENT, type Environment, REDIS, RedisKeys } from '@app/runtime';
import { deliveryOptionsOf } from '../delivery-options/delivery-options.service';
import { readPermissionChanges, readPushContentType, readPushUrl } from './open-api-body.validation';
import { OpenApiCode } from './open-api-errors';

interface Ok {
  code: typeof OpenApiCode.ok;
  message: 'OK';
}
export type SetUrlResponse = Ok & { push_url: string };
export type SetPushContentTypeResponse = Ok & { webhook_push_type: PushContentType };
export type SetPermissionsResponse = Ok & { permissions: Permissions };
export type PushSettingsResponse = Ok & { push_url: string | null; push_content_type: string; permissions: Permissions } & DeliveryOptions;

interface SettingsRow {
  push_url: string | null;
  push_content_type: string;
  permissions: Record<string, boolean>;
}

const OK: Ok = { code: OpenApiCode.ok, message: 'OK' };

/**
 * What an existing settings row takes from the proposed (EXCLUDED) row. Permissions are merged with
 * jsonb `||` in the database, so keys not sent keep their value even under concurrent partial updates.
 */
const ASSIGNMENTS = {
  // A new (or the same) URL is a fresh start: it enables a disabled endpoint and restarts the failure clock.
  push_url: 'push_url = EXCLUDED.push_url, failing_since = NULL, disabled_at = NULL, disabled_reason = NULL',
  push_content_type: 'push_content_type = EXCLUDED.push_content_type',
  permissions: 'permissions = callback_settings.permissions || EXCLUDED.permissions',
} as const;

@Injectable()
export class OpenApiService {
  private readonly logger = new Logger(OpenApiService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  async setUrl(accountId: number, body: unknown): Promise<SetUrlResponse> {
    const pushUrl = await readPushUrl(body, this.environment.delivery.allowPrivateTargets);
    const row = await this.change(accountId, 'push_url', { pushUrl });
    return { ...OK, push_url: row.push_url ?? pushUrl };
  }

  async setPushContentType(accountId: number, body: unknown): Promise<SetPushContentTypeResponse> {
    const contentType = readPushContentType(body);
    await this.change(accountId, 'push_content_type', { contentType });
    return { ...OK, webhook_push_type: contentType };
  }

  async setPermissions(accountId: number, body: unknown): Promise<SetPermissionsResponse> {
    const changes = readPermissionChanges(body);
    const row = await this.change(accountId, 'permissions', { permissions: changes });
    return { ...OK, permissions: completePermissions(row.permissions) };
  }

  async pushSettings(accountId: number): Promise<PushSettingsResponse> {
    const settings = await this.dataSource.getRepository(CallbackSettings).findOneBy({ accountId });
    return {
      ...OK,
      push_url: settings?.pushUrl ?? null,
      push_content_type: settings?.pushContentType ?? DEFAULT_PUSH_CONTENT_TYPE,
      permissions: completePermissions(settings?.permissions),
      ...deliveryOptionsOf(settings),
    };
  }

  /**
   * Applies one change and bumps `version` in a single statement, then tells the workers. The settings
   * row is created with the account; the upsert only covers a row that went missing.
   */
  private async change(
    accountId: number,
    setting: keyof typeof ASSIGNMENTS,
    values: { pushUrl?: string; contentType?: PushContentType; permissions?: Partial<Permissions> },
  ): Promise<SettingsRow> {
    const rows: SettingsRow[] = await this.dataSource.query(
      `INSERT INTO callback_settings (account_id, push_url, push_content_type, permissions, version)
       VALUES ($1, $2, $3, $4::jsonb, 1)
       ON CONFLICT (account_id) DO UPDATE
          SET ${ASSIGNMENTS[setting]}, version = callback_settings.version + 1, updated_at = now()
       RETURNING push_url, push_content_type, permissions`,
      [
        accountId,
        values.pushUrl ?? null,
        values.contentType ?? DEFAULT_PUSH_CONTENT_TYPE,
        // Only the keys sent: merged into an existing row; for a new row absent keys read as false.
        JSON.stringify(values.permissions ?? {}),
      ],
    );
    await this.announce(accountId);
    return rows[0];
  }

  private async announce(accountId: number): Promise<void> {
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
  }
}
