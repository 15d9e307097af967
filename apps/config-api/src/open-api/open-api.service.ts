import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { completePermissions, DEFAULT_PUSH_CONTENT_TYPE, type DeliveryOptions, type Permissions, type PushContentType } from '@app/payloads';
import { CallbackSettings, PRIMARY_DESTINATION_ID } from '@app/persistence';
import { announceStoredSettingsChange, DomainError, ENVIRONMENT, type Environment, REDIS, RedisKeys } from '@app/runtime';
import { deliveryOptionsOf, PrimaryDestination, type PrimarySettings } from '../destinations/primary-destination.service';
import { OperationalEventsPublisher } from '../destinations/operational-events.publisher';
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

const OK: Ok = { code: OpenApiCode.ok, message: 'OK' };

@Injectable()
export class OpenApiService {
  private readonly logger = new Logger(OpenApiService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly primary: PrimaryDestination,
    private readonly operational: OperationalEventsPublisher,
  ) {}

  async setUrl(accountId: number, body: unknown): Promise<SetUrlResponse> {
    const pushUrl = await readPushUrl(body, this.environment.delivery.allowPrivateTargets);
    const settings = this.found(accountId, await this.primary.setUrl(accountId, pushUrl));
    await this.announce(accountId);
    if ((settings as { wasDisabled?: boolean }).wasDisabled) await this.operational.enabledAgain(accountId, PRIMARY_DESTINATION_ID, settings.pushUrl, 'set_url');
    return { ...OK, push_url: settings.pushUrl ?? pushUrl };
  }

  async setPushContentType(accountId: number, body: unknown): Promise<SetPushContentTypeResponse> {
    const contentType = readPushContentType(body);
    this.found(accountId, await this.primary.setContentType(accountId, contentType));
    await this.announce(accountId);
    return { ...OK, webhook_push_type: contentType };
  }

  /**
   * Permissions are the account's (every destination takes an event only while its action's is on):
   * merged with jsonb `||` in the database, so keys not sent keep their value even under concurrent
   * partial updates. The settings row is created with the account; the upsert covers one that went missing.
   */
  async setPermissions(accountId: number, body: unknown): Promise<SetPermissionsResponse> {
    const changes = readPermissionChanges(body);
    const rows: { permissions: Record<string, boolean> }[] = await this.dataSource.query(
      `INSERT INTO callback_settings (account_id, permissions, version) VALUES ($1, $2::jsonb, 1)
       ON CONFLICT (account_id) DO UPDATE
          SET permissions = callback_settings.permissions || EXCLUDED.permissions, version = callback_settings.version + 1, updated_at = now()
       RETURNING permissions`,
      [accountId, JSON.stringify(changes)],
    );
    await this.announce(accountId);
    return { ...OK, permissions: completePermissions(rows[0].permissions) };
  }

  async pushSettings(accountId: number): Promise<PushSettingsResponse> {
    const [settings, primary] = await Promise.all([this.dataSource.getRepository(CallbackSettings).findOneBy({ accountId }), this.primary.read(accountId)]);
    return {
      ...OK,
      push_url: primary?.pushUrl ?? null,
      push_content_type: primary?.contentType ?? DEFAULT_PUSH_CONTENT_TYPE,
      permissions: completePermissions(settings?.permissions),
      ...deliveryOptionsOf(primary),
    };
  }

  /** The signed call named an account that was offboarded meanwhile: nothing was changed. */
  private found(accountId: number, settings: PrimarySettings | null): PrimarySettings {
    if (!settings) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return settings;
  }

  private async announce(accountId: number): Promise<void> {
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
  }
}
