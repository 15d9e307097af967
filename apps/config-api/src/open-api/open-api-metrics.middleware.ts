import type { NextFunction, Request, Response } from 'express';
import { counter, OPEN_API_PREFIX } from '@app/runtime';

const openApiCalls = counter('open_api_requests_total', 'Open API calls by operation (route template; "unmatched" for any other path) and HTTP status', [
  'operation',
  'status',
]);

/** The label for requests that matched no Open API route: one series, whatever path was sent. */
export const UNMATCHED_OPERATION = 'unmatched';

/**
 * The operation of a finished request, from the route Express matched (its template, as declared), never
 * from the path as sent: routes match case-insensitively, and 2^19 spellings of one path must stay one
 * series (CONTRACT §1).
 */
export function operationLabel(request: Request): string {
  const template = (request.route as { path?: unknown } | undefined)?.path;
  // Without a matching handler, the route left on the request is this middleware's own (`/open_api_v1/*path`).
  if (typeof template !== 'string' || !template.startsWith(`${OPEN_API_PREFIX}/`) || template.includes('*')) return UNMATCHED_OPERATION;
  // Path parameters as the documentation writes them (`destinations/{id}`), so labels and /docs agree.
  return template.slice(OPEN_API_PREFIX.length + 1).replace(/:([A-Za-z_]+)/g, '{$1}');
}

/** Counts every request under the Open API prefix once it is answered, matched or not, authenticated or not. */
export function countOpenApiCalls(request: Request, response: Response, next: NextFunction): void {
  response.once('finish', () => openApiCalls.inc({ operation: operationLabel(request), status: String(response.statusCode) }));
  next();
}
