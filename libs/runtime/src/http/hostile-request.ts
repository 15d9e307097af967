import type { NextFunction, Request, Response } from 'express';
import { ApiError, OpenApiError } from './api-error';
import { errorAnswer, OPEN_API_PREFIX } from './error.filter';
import { invalidQuery } from './validation';

const NUL = '\u0000';

/** How deep a request body or query may nest: an ingest envelope's depth (a message of 32 levels one level down, CONTRACT §4). */
export const MAX_REQUEST_DEPTH = 33;

interface Pending {
  value: unknown;
  path: string;
  level: number;
}

export interface ValueProblem {
  path: string;
  problem: string;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

const nulProblem = (path: string): ValueProblem => ({ path, problem: `${path || 'the request body'} must not contain the NUL character (\\u0000)` });

/**
 * The first thing in a parsed body or query that no route can take: a string or key holding U+0000
 * (PostgreSQL cannot store it), nesting past MAX_REQUEST_DEPTH (class-transformer and other recursive
 * walkers would overflow the stack), or a `__proto__` key. Iterative: a body may nest as deep as 1 MiB
 * of brackets allows.
 */
export function hostileValueProblem(root: unknown): ValueProblem | null {
  const pending: Pending[] = [{ value: root, path: '', level: 1 }];
  while (pending.length > 0) {
    const { value, path, level } = pending.pop() as Pending;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return nulProblem(path);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (level > MAX_REQUEST_DEPTH) return { path, problem: `${path} nests deeper than ${MAX_REQUEST_DEPTH - 1} levels` };
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], path: childPath(path, index), level: level + 1 });
      continue;
    }
    const keys = Object.keys(value);
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index];
      const keyPath = childPath(path, key);
      if (key.includes(NUL)) return nulProblem(keyPath);
      if (key === '__proto__') return { path: keyPath, problem: 'the key __proto__ is not allowed' };
      pending.push({ value: (value as Record<string, unknown>)[key], path: keyPath, level: level + 1 });
    }
  }
  return null;
}

/** Lower-cased path prefixes whose routes judge all this themselves, with paths and texts of their own (ingest's messages). */
const CHECKED_BY_ROUTE = ['/v1/events'];

/**
 * What no route can take (see hostileValueProblem) is refused before any route sees it, wherever it is
 * sent (CONTRACT §2: NUL characters), instead of failing in the database or overflowing the stack with
 * a 500. Open API calls get code 2000 (HTTP 400), every other route a 400 naming the query parameter
 * or a 422 naming the body field. Path parameters are left to their routes, which answer 404 for ids
 * that cannot exist.
 */
export function refuseHostileRequests(request: Request, response: Response, next: NextFunction): void {
  const path = request.path;
  if (CHECKED_BY_ROUTE.some((prefix) => path.toLowerCase().startsWith(prefix))) return next();
  const inQuery = hostileValueProblem(request.query);
  const found = inQuery ?? hostileValueProblem(request.body as unknown);
  if (found === null) return next();
  const refusal = path.startsWith(OPEN_API_PREFIX)
    ? new OpenApiError(400, 2000, found.problem)
    : inQuery
      ? invalidQuery([found])
      : new ApiError(422, 'validation_failed', `request is invalid: ${found.problem}`, [found]);
  const { status, body } = errorAnswer(refusal, path);
  response.status(status).json(body);
}
