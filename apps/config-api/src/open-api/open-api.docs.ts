import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { CONTENT_TYPE_FORM, CONTENT_TYPE_JSON, type DeliveryOrdering, PERMISSION_KEYS, type Permissions, type PushContentType } from '@app/payloads';
import { OpenApiErrorBody } from '@app/runtime/docs';
import { INCORRECT_VALUE_MESSAGE, missingParamMessage, OpenApiCode } from './open-api-errors';
import { MAX_NONCE_LENGTH } from './open-api-auth-query';
import { ApiMaxPerSecondProperty, ApiOrderingProperty } from '../destinations/delivery-options.docs';
import type { PushSettingsResponse, SetPermissionsResponse, SetPushContentTypeResponse, SetUrlResponse } from './open-api.service';

/*
 * Documentation of the signed Open API (CONTRACT §2): its query signature, bodies, answers and error
 * codes. Codes and seed texts come from open-api-errors.ts, so the document names what the code sends.
 */

export const OPEN_API_TAG = 'Open API (signed)';

/** The eleven permission keys as boolean properties, generated from PERMISSION_KEYS. */
export class PermissionsMap {}
for (const key of PERMISSION_KEYS) ApiProperty({ type: 'boolean', example: key === 'customer_create' })(PermissionsMap.prototype, key);

/** The same keys, each optional: set_permissions takes any non-empty subset. */
export class PermissionsChange {}
for (const key of PERMISSION_KEYS) ApiProperty({ type: 'boolean', required: false, example: key === 'customer_create' ? true : undefined })(PermissionsChange.prototype, key);

export class SetUrlBody {
  @ApiProperty({ description: 'An http(s) URL of at most 2048 characters whose host is public (unless ALLOW_PRIVATE_TARGETS).', example: 'https://receiver.example.com/callbacks' })
  push_url!: string;
}

export class SetPushContentTypeBody {
  @ApiProperty({ enum: [CONTENT_TYPE_JSON, CONTENT_TYPE_FORM], description: `Matched case-insensitively. Default ${CONTENT_TYPE_FORM}.`, example: CONTENT_TYPE_JSON })
  push_content_type!: string;
}

export class SetPermissionsBody {
  @ApiProperty({ type: PermissionsChange, description: 'Any non-empty subset of the eleven keys; keys not sent keep their value.' })
  permissions!: Partial<Record<string, boolean>>;
}

export class OkAnswer {
  @ApiProperty({ enum: [OpenApiCode.ok], example: OpenApiCode.ok })
  code!: typeof OpenApiCode.ok;

  @ApiProperty({ enum: ['OK'], example: 'OK' })
  message!: 'OK';
}

export class SetUrlAnswer extends OkAnswer implements SetUrlResponse {
  @ApiProperty({ example: 'https://receiver.example.com/callbacks' })
  push_url!: string;
}

export class SetPushContentTypeAnswer extends OkAnswer implements SetPushContentTypeResponse {
  @ApiProperty({ enum: [CONTENT_TYPE_JSON, CONTENT_TYPE_FORM], description: 'The stored value, written canonically.' })
  webhook_push_type!: PushContentType;
}

export class SetPermissionsAnswer extends OkAnswer implements SetPermissionsResponse {
  @ApiProperty({ type: PermissionsMap, description: 'All eleven keys after the change.' })
  permissions!: Permissions;
}

/**
 * An account's callback settings, as push_settings and the admin account view both show them, added
 * after `Base`'s properties (the documents list them in that order).
 */
export function WithPushSettings<TBase extends Type<object>>(Base: TBase, pushUrlDescription: string) {
  class PushSettings extends Base {
    @ApiProperty({ type: 'string', nullable: true, description: pushUrlDescription })
    push_url!: string | null;

    @ApiProperty({ enum: [CONTENT_TYPE_JSON, CONTENT_TYPE_FORM] })
    push_content_type!: string;

    @ApiProperty({ type: PermissionsMap })
    permissions!: Permissions;

    @ApiOrderingProperty()
    ordering!: DeliveryOrdering;

    @ApiMaxPerSecondProperty()
    max_per_second!: number | null;
  }
  return PushSettings;
}

export class PushSettingsAnswer extends WithPushSettings(OkAnswer, 'null until set_url.') implements PushSettingsResponse {}

export function openApiError(code: number, message: string, exception: string): { code: number; message: string; exception: { message: string } } {
  return { code, message, exception: { message: exception } };
}

export function errorResponse(status: number, description: string, examples: Record<string, ReturnType<typeof openApiError>>): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status,
    description,
    content: {
      'application/json': {
        schema: { $ref: getSchemaPath(OpenApiErrorBody) },
        examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { summary: `${value.code}: ${value.exception.message}`, value }])),
      },
    },
  });
}

const SIGN_DESCRIPTION =
  'Lowercase hex SHA-256 of `email&open_api_token&timestamp&nonce&v2` (the five values joined with `&`; the query string and body are not signed). ' +
  'Test vector: `admin@example.com`, `3f1c0b8e6a2d4f5e9b7c`, `1700000000`, `n-0001` → `29ecc78a62eb5ad1b74258e845f5079effbd58b1dcce683fd4aa6c9d0ddda816`.';

/**
 * The signed query of every Open API call and the answers of its checks: 2059/20621/20622/20623/20624
 * (401), the rate limit (429, code 2000) and Redis being unavailable (503, code 2000).
 */
export function ApiSignedOpenApi(): ClassDecorator {
  return applyDecorators(
    ApiTags(OPEN_API_TAG),
    ApiExtraModels(OpenApiErrorBody),
    ApiQuery({ name: 'email', required: true, description: "The account's email (case-insensitive).", schema: { type: 'string', format: 'email' }, example: 'admin@example.com' }),
    ApiQuery({ name: 'timestamp', required: true, description: 'Unix seconds; at most 300 s away from the server clock.', schema: { type: 'string', pattern: '^-?[0-9]{1,15}$' }, example: '1700000000' }),
    ApiQuery({ name: 'nonce', required: true, description: `Any string of 1 to ${MAX_NONCE_LENGTH} characters, never reused by the account within 15 minutes.`, schema: { type: 'string', minLength: 1, maxLength: MAX_NONCE_LENGTH }, example: 'n-0001' }),
    ApiQuery({ name: 'sign_version', required: true, schema: { type: 'string', enum: ['v2'] }, example: 'v2' }),
    ApiQuery({ name: 'sign', required: true, description: SIGN_DESCRIPTION, schema: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' }, example: '29ecc78a62eb5ad1b74258e845f5079effbd58b1dcce683fd4aa6c9d0ddda816' }),
    errorResponse(401, 'The signature check failed. `code` says which check: 2059 unknown email, wrong sign or sign_version not v2; 20621 timestamp missing or not an integer; 20622 timestamp more than 300 s away; 20623 nonce already used within 15 minutes; 20624 nonce missing or empty.', {
      authFailed: openApiError(OpenApiCode.authFailed, 'Authentication failed', 'unknown email or wrong sign'),
      badTimestamp: openApiError(OpenApiCode.badTimestamp, 'Invalid timestamp', 'timestamp must be an integer number of Unix seconds'),
      staleTimestamp: openApiError(OpenApiCode.staleTimestamp, 'Timestamp expired', 'timestamp is more than 300 s away from the server clock (server time 1700000400)'),
      replayedNonce: openApiError(OpenApiCode.replayedNonce, 'Nonce already used', 'nonce was already used by this account within the last 15 minutes'),
      missingNonce: openApiError(OpenApiCode.missingNonce, 'Invalid nonce', 'nonce is missing or empty'),
    }),
    errorResponse(429, 'More than OPEN_API_RATE_LIMIT (60) calls in a minute by this account; `Retry-After` says when to come back. Code 2000.', {
      rateLimited: openApiError(OpenApiCode.invalidParam, 'Unknown error', 'rate limit of 60 calls per minute exceeded; retry in 42 s'),
    }),
    errorResponse(503, 'PostgreSQL or Redis is unavailable (replay protection cannot be checked); nothing was changed. Code 2000.', {
      unavailable: openApiError(OpenApiCode.invalidParam, 'Unknown error', 'replay protection is unavailable (Redis is not reachable); try again shortly'),
    }),
  );
}

/** The answers of a body-carrying operation beyond the signature checks. */
export function ApiOpenApiBody(body: Type<unknown>, invalid: Record<string, string>): MethodDecorator {
  return applyDecorators(
    ApiBody({ type: body }),
    errorResponse(400, 'A required body parameter is missing or has a wrong value (code 2000), or the body is not valid JSON.', Object.fromEntries(
      Object.entries(invalid).map(([name, text]) => [name, openApiError(OpenApiCode.invalidParam, 'Unknown error', text)]),
    )),
    errorResponse(413, 'The body is larger than 1 MiB (code 2000).', { tooLarge: openApiError(OpenApiCode.invalidParam, 'Unknown error', 'request body is too large') }),
    errorResponse(415, 'The body is not `Content-Type: application/json` (code 2000).', {
      notJson: openApiError(OpenApiCode.invalidParam, 'Unknown error', 'request body must be JSON (Content-Type: application/json), not text/plain'),
    }),
  );
}

export const SET_URL_ERRORS = { missing: missingParamMessage('push_url'), notHttp: 'push_url must use http or https', private: 'push_url points to a non-public address or to a host that does not resolve' };
export const SET_PUSH_CONTENT_TYPE_ERRORS = { incorrect: INCORRECT_VALUE_MESSAGE };
export const SET_PERMISSIONS_ERRORS = { missing: missingParamMessage('permissions'), unknownKey: 'unknown permission key: customer_delete' };

/**
 * `operationId` is the operation's name in the generated clients (clients/): snake case, as the seed's
 * paths (`set_url`); the TypeScript client writes it in camel case (`setUrl`).
 */
export function ApiOpenApiOperation(operationId: string, summary: string, answer: Type<unknown>, description?: string): MethodDecorator {
  return applyDecorators(ApiOperation({ operationId, summary, description }), ApiOkResponse({ description: '`code` 1000: done.', type: answer }));
}
