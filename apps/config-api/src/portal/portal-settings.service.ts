import { Injectable } from '@nestjs/common';
import { ApiError, type ErrorDetail, OpenApiError } from '@app/runtime';
import { OpenApiService, type PushSettingsResponse } from '../open-api/open-api.service';
import { readPermissionChanges, readPushContentType, readPushUrl } from '../open-api/open-api-body.validation';
import { OpenApiCode } from '../open-api/open-api-errors';

const FIELDS = ['push_url', 'push_content_type', 'permissions'] as const;
type Field = (typeof FIELDS)[number];

export type PortalSettings = Omit<PushSettingsResponse, 'code' | 'message'>;

/**
 * The portal's settings: the Open API's own checks and storage (set_url, set_push_content_type,
 * set_permissions), answered in the admin error format: 400 with a detail per wrong field, whose
 * problem is the Open API's text (CONTRACT §10). Every field is checked before any is stored.
 */
@Injectable()
export class PortalSettingsService {
  constructor(private readonly openApi: OpenApiService) {}

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
    const checks: Record<Field, () => Promise<unknown>> = {
      push_url: () => readPushUrl(fields, allowPrivateTargets),
      push_content_type: () => Promise.resolve(readPushContentType(fields)),
      permissions: () => Promise.resolve(readPermissionChanges(fields)),
    };
    for (const field of given) {
      try {
        await checks[field]();
      } catch (error) {
        if (!(error instanceof OpenApiError)) throw error;
        details.push({ path: field, problem: error.exceptionMessage });
      }
    }
    if (details.length > 0) {
      throw new ApiError(400, 'invalid_param', `code ${OpenApiCode.invalidParam}: ${details.map((detail) => detail.problem).join('; ')}`, details);
    }
    if (given.includes('push_url')) await this.openApi.setUrl(accountId, fields);
    if (given.includes('push_content_type')) await this.openApi.setPushContentType(accountId, fields);
    if (given.includes('permissions')) await this.openApi.setPermissions(accountId, fields);
    return this.read(accountId);
  }
}
