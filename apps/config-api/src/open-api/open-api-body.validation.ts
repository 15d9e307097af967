import { CONTENT_TYPE_FORM, CONTENT_TYPE_JSON, PERMISSION_KEYS, type Permissions, type PushContentType } from '@app/payloads';
import { checkTargetUrl } from '@app/runtime';
import { INCORRECT_VALUE_MESSAGE, invalidParam, missingParamMessage } from './open-api-errors';

/*
 * Body checks of the three POST operations, written by hand (not class-validator) because the seed
 * fixes the exact exception texts. Top-level fields other than the one an operation reads are ignored.
 */

/** A body that is not a JSON object (an array, a string, none) has none of the fields. */
function fieldsOf(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** Keys in messages are cut so an absurd key cannot blow up the answer. */
function shown(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}

/**
 * `push_url`: an http(s) URL of at most 2048 characters whose host is public unless private targets
 * are allowed (the same rule runs again when the worker connects). Surrounding whitespace is dropped.
 */
export async function readPushUrl(body: unknown, allowPrivateTargets: boolean): Promise<string> {
  const value = fieldsOf(body).push_url;
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw invalidParam(missingParamMessage('push_url'));
  }
  if (typeof value !== 'string') throw invalidParam('push_url must be a string');
  const url = value.trim();
  const problem = await checkTargetUrl(url, allowPrivateTargets);
  if (problem) throw invalidParam(`push_url ${problem}`);
  return url;
}

/** `push_content_type`: `JSON` or `application/x-www-form-urlencoded`, any letter case, stored canonically. */
export function readPushContentType(body: unknown): PushContentType {
  const value = fieldsOf(body).push_content_type;
  if (typeof value === 'string') {
    const lowered = value.toLowerCase();
    if (lowered === CONTENT_TYPE_JSON.toLowerCase()) return CONTENT_TYPE_JSON;
    if (lowered === CONTENT_TYPE_FORM) return CONTENT_TYPE_FORM;
  }
  throw invalidParam(INCORRECT_VALUE_MESSAGE);
}

/** `permissions`: a non-empty object of known keys to booleans; every bad key is named. */
export function readPermissionChanges(body: unknown): Partial<Permissions> {
  const value = fieldsOf(body).permissions;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    throw invalidParam(missingParamMessage('permissions'));
  }
  const known = new Set<string>(PERMISSION_KEYS);
  const changes: Partial<Permissions> = {};
  const problems: string[] = [];
  for (const [key, flag] of Object.entries(value as Record<string, unknown>)) {
    if (!known.has(key)) problems.push(`unknown permission key: ${shown(key)}`);
    else if (typeof flag !== 'boolean') problems.push(`permissions.${key} must be true or false`);
    else changes[key as keyof Permissions] = flag;
  }
  if (problems.length > 0) throw invalidParam(problems.join('; '));
  return changes;
}
