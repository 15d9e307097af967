import type { NextFunction, Request, Response } from 'express';
import { ApiError, OpenApiError } from './api-error';
import { errorAnswer, OPEN_API_PREFIX } from './error.filter';

const NUL = '\u0000';

interface Pending {
  value: unknown;
  path: string;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * The path of the first string or key holding U+0000 in a parsed body or query, or null. Iterative: a
 * body may nest as deep as 1 MiB of brackets allows.
 */
export function nulCharacterPath(root: unknown, rootPath = ''): string | null {
  const pending: Pending[] = [{ value: root, path: rootPath }];
  while (pending.length > 0) {
    const { value, path } = pending.pop() as Pending;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return path;
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], path: childPath(path, index) });
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let index = keys.length - 1; index >= 0; index -= 1) {
        const key = keys[index];
        if (key.includes(NUL)) return childPath(path, key);
        pending.push({ value: (value as Record<string, unknown>)[key], path: childPath(path, key) });
      }
    }
  }
  return null;
}

/** Lower-cased path prefixes whose routes report NUL characters themselves, with paths of their own (ingest's messages). */
const CHECKED_BY_ROUTE = ['/v1/events'];

/**
 * PostgreSQL's text and jsonb cannot hold U+0000: text holding it is refused before any route sees it
 * (CONTRACT §2), wherever it is sent, instead of failing in the database with a 500. Open API calls get
 * code 2000 (HTTP 400), every other route a 422 naming the field. Path parameters are left to their
 * routes, which answer 404 for ids that cannot exist.
 */
export function refuseNulCharacters(request: Request, response: Response, next: NextFunction): void {
  const path = request.path;
  if (CHECKED_BY_ROUTE.some((prefix) => path.toLowerCase().startsWith(prefix))) return next();
  const field = nulCharacterPath(request.query) ?? nulCharacterPath(request.body as unknown);
  if (field === null) return next();
  const problem = `${field || 'the request body'} must not contain the NUL character (\\u0000)`;
  const refusal = path.startsWith(OPEN_API_PREFIX)
    ? new OpenApiError(400, 2000, problem)
    : new ApiError(422, 'validation_failed', `request is invalid: ${problem}`, [{ path: field, problem }]);
  const { status, body } = errorAnswer(refusal, path);
  response.status(status).json(body);
}
