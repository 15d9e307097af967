import {
  CONTENT_TYPE_FORM,
  CONTENT_TYPE_JSON,
  DESTINATION_FORMATS,
  DESTINATION_TYPES,
  type DeliveryOrdering,
  type DestinationAuthInput,
  type DestinationFilter,
  type DestinationFormat,
  type DestinationType,
  EVENT_ACTIONS,
  type EventAction,
  OPERATIONAL_ACTIONS,
  type OperationalAction,
  hasNulCharacter,
  type PushContentType,
  validateDestinationFilter,
} from '@app/payloads';
import type { ErrorDetail } from '@app/runtime';
import { checkDeliveryOptions } from './delivery-options.validation';
import { readDestinationAuth } from './destination-auth.validation';
import { destinationTargetProblem } from './destination-target.validation';
import { brokerPolicyProblem, readExpireAfter, readRetry, type RetryPolicyInput } from './destination-retry.validation';

/*
 * The one check of a destination's create and PUT bodies (CONTRACT §11), shared by the Open API, the
 * portal and the admin API; each door turns the problems into its own error shape. Every problem names
 * its field, and nothing is stored unless every field is right.
 */

/** A destination's settings in the clear, as checked (the service seals target and auth). */
export interface DestinationSettings {
  type: DestinationType;
  target: string;
  actions: (EventAction | OperationalAction)[] | null;
  filter: DestinationFilter | null;
  content_type: PushContentType;
  format: DestinationFormat;
  auth: DestinationAuthInput | null;
  ordering: DeliveryOrdering;
  max_per_second: number | null;
  /** Its retry policy (CONTRACT §13); a change carries the fields sent, merged into the stored policy. */
  retry: RetryPolicyInput;
  expire_after_ms: number | null;
}

/** What a PUT starts from: the stored settings, but for credentials only the auth type. */
export type StoredDestinationSettings = Omit<DestinationSettings, 'target' | 'auth'> & { target: string; authType: DestinationAuthInput['type'] | null };

export const DESTINATION_FIELDS = ['type', 'target', 'actions', 'filter', 'content_type', 'format', 'auth', 'ordering', 'max_per_second', 'retry', 'expire_after'] as const;
type Field = (typeof DESTINATION_FIELDS)[number];
/** What a PUT of the primary may change (CONTRACT §13): its target and content type are set_url's and set_push_content_type's. */
export const PRIMARY_FIELDS = ['retry', 'expire_after', 'ordering', 'max_per_second'] as const;

export type DestinationBodyCheck = { changes: Partial<DestinationSettings>; problems: [] } | { changes: null; problems: ErrorDetail[] };

export const NUL_PROBLEM = 'must not contain the NUL character (\\u0000)';

function readType(value: unknown, problems: ErrorDetail[]): DestinationType | undefined {
  if (typeof value === 'string' && (DESTINATION_TYPES as readonly string[]).includes(value)) return value as DestinationType;
  problems.push({ path: 'type', problem: `must be ${DESTINATION_TYPES.map((type) => `"${type}"`).join(', ')}` });
  return undefined;
}

function readActions(value: unknown, problems: ErrorDetail[]): (EventAction | OperationalAction)[] | null | undefined {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length === 0) {
    problems.push({ path: 'actions', problem: 'must be a non-empty array of action names, or null for every action' });
    return undefined;
  }
  // A destination may also list the service's own events about the account's destinations (CONTRACT §14).
  const known = new Set<string>([...EVENT_ACTIONS, ...OPERATIONAL_ACTIONS]);
  const bad = (value as unknown[]).find((action) => typeof action !== 'string' || !known.has(action));
  if (bad !== undefined) {
    problems.push({ path: 'actions', problem: `${JSON.stringify(bad).slice(0, 64)} is not an action (${[...EVENT_ACTIONS, ...OPERATIONAL_ACTIONS].join(', ')})` });
    return undefined;
  }
  return [...new Set(value as (EventAction | OperationalAction)[])];
}

function readContentType(value: unknown, problems: ErrorDetail[]): PushContentType | undefined {
  if (typeof value === 'string') {
    const lowered = value.toLowerCase();
    if (lowered === CONTENT_TYPE_JSON.toLowerCase()) return CONTENT_TYPE_JSON;
    if (lowered === CONTENT_TYPE_FORM) return CONTENT_TYPE_FORM;
  }
  problems.push({ path: 'content_type', problem: `must be "${CONTENT_TYPE_JSON}" or "${CONTENT_TYPE_FORM}"` });
  return undefined;
}

function readFormat(value: unknown, problems: ErrorDetail[]): DestinationFormat | undefined {
  if (typeof value === 'string' && (DESTINATION_FORMATS as readonly string[]).includes(value)) return value as DestinationFormat;
  problems.push({ path: 'format', problem: 'must be "udesk" or "cloudevents"' });
  return undefined;
}

function readFilter(value: unknown, problems: ErrorDetail[]): DestinationFilter | null | undefined {
  const problem = validateDestinationFilter(value);
  if (problem === null) return value as DestinationFilter | null;
  problems.push({ path: 'filter', problem: problem.replace(/^filter: /, '') });
  return undefined;
}

/** The settings after the change, for the rules that tie fields together. */
function crossFieldProblems(changes: Partial<DestinationSettings>, current: StoredDestinationSettings | null, problems: ErrorDetail[]): void {
  const type = changes.type ?? current?.type;
  const authType = changes.auth !== undefined ? (changes.auth?.type ?? null) : (current?.authType ?? null);
  const contentType = changes.content_type ?? current?.content_type ?? CONTENT_TYPE_JSON;
  const format = changes.format ?? current?.format ?? 'udesk';
  const target = changes.target ?? current?.target;
  if (current && changes.type !== undefined && changes.type !== current.type && changes.target === undefined) {
    problems.push({ path: 'target', problem: `must be sent with the new type (a ${changes.type} target)` });
  }
  if (type !== undefined && type !== 'webhook' && authType !== null) problems.push({ path: 'auth', problem: 'is for webhooks only (brokers take credentials in the target URL)' });
  if (type !== undefined && type !== 'webhook' && contentType !== CONTENT_TYPE_JSON) problems.push({ path: 'content_type', problem: 'must be "JSON" for a broker: only webhooks send a form body' });
  if (format === 'cloudevents' && contentType !== CONTENT_TYPE_JSON) problems.push({ path: 'content_type', problem: 'must be "JSON" with format "cloudevents"' });
  if (authType === 'mtls' && type === 'webhook' && target !== undefined && !target.startsWith('https:')) {
    problems.push({ path: 'auth', problem: 'mtls needs an https:// target' });
  }
  const policy = { stopOn: changes.retry?.stopOn ?? current?.retry.stopOn ?? [], disableOn: changes.retry?.disableOn ?? current?.retry.disableOn ?? [] };
  const brokerProblem = type === undefined ? null : brokerPolicyProblem(type, policy);
  if (brokerProblem) problems.push(brokerProblem);
}

/**
 * Checks a create body (`current` null: type and target required) or a PUT body (fields not sent keep
 * their value). Unknown keys are refused rather than ignored, so a misspelt field never looks applied.
 */
export async function checkDestinationBody(
  body: unknown,
  current: StoredDestinationSettings | null,
  allowPrivateTargets: boolean,
  allowed: readonly string[] = DESTINATION_FIELDS,
): Promise<DestinationBodyCheck> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { changes: null, problems: [{ path: allowed[0], problem: 'the body must be a JSON object of destination fields' }] };
  }
  const fields = body as Record<string, unknown>;
  const problems: ErrorDetail[] = [];
  const changes: Partial<DestinationSettings> = {};
  for (const key of Object.keys(fields)) {
    if (!allowed.includes(key)) {
      const what = allowed === DESTINATION_FIELDS ? 'a destination field' : 'a field the primary destination takes here';
      problems.push({ path: key.slice(0, 64), problem: `is not ${what} (${allowed.join(', ')})` });
    }
    else if (hasNulCharacter(fields[key])) problems.push({ path: key, problem: NUL_PROBLEM });
  }
  if (problems.length > 0) return { changes: null, problems };
  const given = (field: Field): boolean => fields[field] !== undefined;
  if (!current) {
    for (const field of ['type', 'target'] as const) if (!given(field)) problems.push({ path: field, problem: 'is required' });
  } else if (Object.keys(fields).length === 0) {
    problems.push({ path: allowed[0], problem: `give at least one of ${allowed.join(', ')}` });
  }
  if (given('type')) changes.type = readType(fields.type, problems);
  const type = changes.type ?? current?.type;
  if (given('target') && type !== undefined) {
    const target = typeof fields.target === 'string' ? fields.target.trim() : fields.target;
    const problem = await destinationTargetProblem(type, target, allowPrivateTargets);
    if (problem) problems.push({ path: 'target', problem });
    else changes.target = target as string;
  }
  if (given('actions')) changes.actions = readActions(fields.actions, problems);
  if (given('filter')) changes.filter = readFilter(fields.filter, problems);
  if (given('content_type')) changes.content_type = readContentType(fields.content_type, problems);
  if (given('format')) changes.format = readFormat(fields.format, problems);
  if (given('auth')) changes.auth = await readDestinationAuth(fields.auth, problems, allowPrivateTargets);
  const options = Object.fromEntries((['ordering', 'max_per_second'] as const).filter(given).map((key) => [key, fields[key]]));
  if (Object.keys(options).length > 0) {
    const check = checkDeliveryOptions(options);
    if (check.changes === null) problems.push(...check.problems);
    else Object.assign(changes, check.changes);
  }
  if (given('retry')) {
    const retry = readRetry(fields.retry, current?.retry ?? null, problems);
    if (retry) changes.retry = { ...(current?.retry ?? { scheduleMs: null, stopOn: [], disableOn: [] }), ...retry };
  }
  if (given('expire_after') || fields.expire_after === null) {
    const expireAfter = readExpireAfter(fields.expire_after, problems);
    if (expireAfter !== undefined) changes.expire_after_ms = expireAfter;
  }
  if (problems.length === 0) crossFieldProblems(changes, current, problems);
  return problems.length > 0 ? { changes: null, problems } : { changes, problems: [] };
}

/** The problems in one line, each led by its field: the Open API's exception message. */
export function describeDestinationProblems(problems: ErrorDetail[]): string {
  return problems.map(({ path, problem }) => `${path}: ${problem}`).join('; ');
}
