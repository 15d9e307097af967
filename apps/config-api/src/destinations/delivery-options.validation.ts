import { DELIVERY_ORDERINGS, type DeliveryOptionsChange, type DeliveryOrdering, MAX_PER_SECOND_MAX, MAX_PER_SECOND_MIN } from '@app/payloads';
import type { ErrorDetail } from '@app/runtime';

/*
 * The one check of a delivery options change (CONTRACT §9), shared by the Open API, the admin API and
 * the account portal; each turns the problems into its own error shape. Every problem names its field.
 */

export const DELIVERY_OPTION_KEYS = ['ordering', 'max_per_second'] as const;

/** The Open API's `param is missing …` text names this when neither option is sent. */
export const EITHER_OPTION = 'ordering or max_per_second';

export const ORDERING_PROBLEM = `must be ${DELIVERY_ORDERINGS.map((value) => `"${value}"`).join(' or ')}`;
export const MAX_PER_SECOND_PROBLEM = `must be an integer from ${MAX_PER_SECOND_MIN} to ${MAX_PER_SECOND_MAX}, or null for no limit`;
export const UNKNOWN_OPTION_PROBLEM = 'is not a delivery option (ordering, max_per_second)';
export const NOTHING_SENT_PROBLEM = `send ${EITHER_OPTION} (or both)`;

export type DeliveryOptionsCheck = { changes: DeliveryOptionsChange; problems: [] } | { changes: null; problems: ErrorDetail[]; nothingSent: boolean };

/** Keys in messages are cut so an absurd key cannot blow up the answer. */
function shown(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}

function isOrdering(value: unknown): value is DeliveryOrdering {
  return typeof value === 'string' && (DELIVERY_ORDERINGS as readonly string[]).includes(value);
}

function isPace(value: unknown): value is number | null {
  return value === null || (Number.isInteger(value) && (value as number) >= MAX_PER_SECOND_MIN && (value as number) <= MAX_PER_SECOND_MAX);
}

/**
 * A change is an object with `ordering` and/or `max_per_second`. Unknown keys are refused rather than
 * ignored: the body is the option map (like set_permissions' map), and a misspelt option silently
 * dropped would look applied. A body that is not an object, or names no option, sends nothing.
 */
export function checkDeliveryOptions(body: unknown): DeliveryOptionsCheck {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const problems: ErrorDetail[] = [];
  const changes: DeliveryOptionsChange = {};
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'ordering') {
      if (isOrdering(value)) changes.ordering = value;
      else problems.push({ path: key, problem: ORDERING_PROBLEM });
    } else if (key === 'max_per_second') {
      if (isPace(value)) changes.max_per_second = value;
      else problems.push({ path: key, problem: MAX_PER_SECOND_PROBLEM });
    } else {
      problems.push({ path: shown(key), problem: UNKNOWN_OPTION_PROBLEM });
    }
  }
  if (problems.length > 0) return { changes: null, problems, nothingSent: false };
  if (Object.keys(changes).length === 0) {
    return { changes: null, problems: DELIVERY_OPTION_KEYS.map((path) => ({ path, problem: NOTHING_SENT_PROBLEM })), nothingSent: true };
  }
  return { changes, problems: [] };
}

/** The problems in one line, each led by its field, as the Open API's exception message. */
export function describeProblems(problems: ErrorDetail[]): string {
  return problems.map(({ path, problem }) => `${path} ${problem}`).join('; ');
}
