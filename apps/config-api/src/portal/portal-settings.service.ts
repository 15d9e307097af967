import { Injectable } from '@nestjs/common';
import { DomainError, type ErrorDetail, OpenApiError } from '@app/runtime';
import { DeliveryOptionsService } from '../destinations/delivery-options.service';
import { checkDeliveryOptions, DELIVERY_OPTION_KEYS } from '../destinations/delivery-options.validation';
import { OpenApiService, type PushSettingsResponse } from '../open-api/open-api.service';
import { readPermissionChanges, readPushContentType, readPushUrl } from '../open-api/open-api-body.validation';
import { OpenApiCode } from '../open-api/open-api-errors';

const OPEN_API_FIELDS = ['push_url', 'push_content_type', 'permissions'] as const;
const FIELDS = [...OPEN_API_FIELDS, ...DELIVERY_OPTION_KEYS] as const;
type OpenApiField = (typeof OPEN_API_FIELDS)[number];

export type PortalSettings = Omit<PushSettingsResponse, 'code' | 'message'>;

/**
 * The portal's settings: the Open API's own checks and storage (set_url, set_push_content_type,
 * set_permissions, set_delivery_options), answered in the admin error format: 400 with a detail per wrong field, whose
 * problem is the Open API's text (CONTRACT §10). Every field is checked before any is stored.
 */
function isOpenApiField(field: string): field is OpenApiField {
  return (OPEN_API_FIELDS as readonly string[]).includes(field);
}

@Injectable()
export class PortalSettingsService {
  constructor(
    private readonly openApi: OpenApiService,
    private readonly deliveryOptions: DeliveryOptionsService,
  ) {}

  async read(accountId: number): Promise<PortalSettings> {
    const { code: _code, message: _message, ...settings } = await this.openApi.pushSettings(accountId);
    return settings;
  }

  async update(accountId: number, body: unknown, allowPrivateTargets: boolean): Promise<PortalSettings> {
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
    const given = FIELDS.filter((field) => fields !== null && field in fields);
    const unknown = fields === null ? [] : Object.keys(fields).filter((key) => !(FIELDS as readonly string[]).includes(key));
    const details: ErrorDetail[] = unknown.map((key) => ({ path: key.slice(0, 64), problem: `${key.slice(0, 64)} is not a setting` }));
    if (given.length === 0 && details.length === 0) details.push({ path: 'push_url', problem: `give at least one of ${FIELDS.join(', ')}` });
    const checks: Record<OpenApiField, () => Promise<unknown>> = {
      push_url: () => readPushUrl(fields, allowPrivateTargets),
      push_content_type: () => Promise.resolve(readPushContentType(fields)),
      permissions: () => Promise.resolve(readPermissionChanges(fields)),
    };
    for (const field of given) {
      if (!isOpenApiField(field)) continue;
      try {
        await checks[field]();
      } catch (error) {
        if (!(error instanceof OpenApiError)) throw error;
        details.push({ path: field, problem: error.exceptionMessage });
      }
    }
    const optionFields = fields === null ? {} : Object.fromEntries(DELIVERY_OPTION_KEYS.filter((key) => key in fields).map((key) => [key, fields[key]]));
    const options = Object.keys(optionFields).length > 0 ? checkDeliveryOptions(optionFields) : null;
    if (options?.changes === null) details.push(...options.problems);
    if (details.length > 0) {
      throw new DomainError('invalid_param', `code ${OpenApiCode.invalidParam}: ${details.map((detail) => detail.problem).join('; ')}`, details);
    }
    if (given.includes('push_url')) await this.openApi.setUrl(accountId, fields);
    if (given.includes('push_content_type')) await this.openApi.setPushContentType(accountId, fields);
    if (given.includes('permissions')) await this.openApi.setPermissions(accountId, fields);
    if (options?.changes) await this.deliveryOptions.change(accountId, options.changes);
    return this.read(accountId);
  }
}
