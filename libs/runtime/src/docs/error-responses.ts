import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { errorCodeWord } from '../http/error.filter';
import { ApiErrorBody } from './error-bodies';

/** Security scheme names of the document (see buildApiDocument). */
export const ADMIN_TOKEN_SCHEME = 'admin-token';
export const INGEST_TOKEN_SCHEME = 'ingest-token';
export const PORTAL_SESSION_SCHEME = 'portal-session';

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 502 | 503 | 504;

const DEFAULT_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'The body is not valid JSON.',
  401: 'The bearer token is missing or wrong (or the server has no token configured).',
  403: 'The caller\'s role does not cover this call (viewer: reads; operator: also redelivery, endpoint enabling, pause and resume; admin: everything), or a signed-in console write came without its `x-csrf-token`; `message` names the role.',
  404: 'The resource does not exist.',
  409: 'Conflicts with an existing resource.',
  413: 'The body is larger than 1 MiB.',
  422: 'A field is invalid; `details` names each field path and the problem.',
  429: 'Too many calls in this minute; `Retry-After` says in how many seconds to come back.',
  502: 'The upstream webhook failed or answered off-spec.',
  503: 'PostgreSQL or Redis is unavailable; nothing was changed, try again shortly.',
  504: 'The upstream webhook did not answer in time.',
};

/** One status, or a status with the text saying when it happens on this route. */
export type ErrorResponseSpec = ErrorStatus | [ErrorStatus, string];

/**
 * Documents the `{"error","message","details"?}` answers of an admin or ingest route. Each status gets the
 * shared ApiErrorBody schema and an example whose `error` word is the one the error filter really sends.
 */
export function ApiErrorResponses(...specs: ErrorResponseSpec[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ApiErrorBody),
    ...specs.map((spec) => {
      const [status, description] = Array.isArray(spec) ? spec : [spec, DEFAULT_DESCRIPTIONS[spec]];
      return ApiResponse({
        status,
        description,
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ApiErrorBody) },
            example: { error: errorCodeWord(status), message: description },
          },
        },
      });
    }),
  );
}

/** Admin API controllers: a bearer token (ADMIN_TOKEN or a named one) or the console's session, a role per route, and every route reads the database. */
export function ApiAdminAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(ApiBearerAuth(ADMIN_TOKEN_SCHEME), ApiErrorResponses(401, 403, 503));
}

/** Ingest controllers: `Authorization: Bearer <one of INGEST_TOKEN>`. */
export function ApiIngestAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(ApiBearerAuth(INGEST_TOKEN_SCHEME), ApiErrorResponses(401, 503));
}

/** Routes with a JSON body: malformed JSON and oversized bodies are refused before validation. */
export function ApiJsonBodyErrors(): MethodDecorator & ClassDecorator {
  return ApiErrorResponses(400, 413);
}
