import { type ErrorDetail, formatDurationMs, parseDuration } from '@app/runtime';

/*
 * A destination's retry policy and deadline (CONTRACT §13), checked for every door alike: `retry`
 * ({schedule?, stop_on?, disable_on?}, a field not sent keeping its value) and `expire_after` (a
 * duration, or null for none). Every problem names its field.
 */

export const MAX_SCHEDULE_LENGTH = 20;
const MIN_WAIT_MS = 100;
const MAX_WAIT_MS = 7 * 86_400_000;
const MIN_EXPIRY_MS = 1_000;
const MAX_EXPIRY_MS = 30 * 86_400_000;
/** Always retried: they say "later", not "never" (a time-out, a pace). */
const ALWAYS_RETRIED = new Set([408, 429]);

/** A policy as checked: `scheduleMs` null keeps RETRY_SCHEDULE, the deployment's default. */
export interface RetryPolicyInput {
  scheduleMs: number[] | null;
  stopOn: number[];
  disableOn: number[];
}

export interface RetryPolicyChange {
  retry?: Partial<RetryPolicyInput>;
  /** null: no deadline. */
  expireAfterMs?: number | null;
}

function readSchedule(value: unknown, problems: ErrorDetail[]): number[] | undefined {
  const path = 'retry.schedule';
  if (!Array.isArray(value) || value.length > MAX_SCHEDULE_LENGTH) {
    problems.push({ path, problem: `must be a list of 0 to ${MAX_SCHEDULE_LENGTH} durations such as "30s", "5m", "2h", "1d"` });
    return undefined;
  }
  const waits: number[] = [];
  for (const item of value as unknown[]) {
    const ms = typeof item === 'string' ? parseDuration(item, { days: true }) : null;
    if (ms === null || ms < MIN_WAIT_MS || ms > MAX_WAIT_MS) {
      problems.push({ path, problem: `${JSON.stringify(item).slice(0, 32)} is not a duration from 100ms to 7d (write it as "500ms", "30s", "5m", "2h" or "1d")` });
      return undefined;
    }
    waits.push(ms);
  }
  return waits;
}

function readStatuses(path: 'retry.stop_on' | 'retry.disable_on', value: unknown, problems: ErrorDetail[]): number[] | undefined {
  if (!Array.isArray(value)) {
    problems.push({ path, problem: 'must be a list of HTTP statuses from 400 to 499' });
    return undefined;
  }
  for (const status of value as unknown[]) {
    if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 499) {
      problems.push({ path, problem: `${JSON.stringify(status).slice(0, 32)} is not an HTTP status from 400 to 499` });
      return undefined;
    }
    if (ALWAYS_RETRIED.has(status as number)) {
      problems.push({ path, problem: `${status as number} is always retried (408 and 429 ask for a later call)` });
      return undefined;
    }
  }
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** Reads `retry` as sent; `current` is the stored policy a PUT starts from (null for a create). */
export function readRetry(value: unknown, current: RetryPolicyInput | null, problems: ErrorDetail[]): Partial<RetryPolicyInput> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ path: 'retry', problem: 'must be an object: {"schedule"?, "stop_on"?, "disable_on"?}' });
    return undefined;
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !['schedule', 'stop_on', 'disable_on'].includes(key));
  if (unknown !== undefined) {
    problems.push({ path: `retry.${unknown.slice(0, 32)}`, problem: 'is not a retry field (schedule, stop_on, disable_on)' });
    return undefined;
  }
  const before = problems.length;
  const change: Partial<RetryPolicyInput> = {};
  if (fields.schedule !== undefined) change.scheduleMs = readSchedule(fields.schedule, problems);
  if (fields.stop_on !== undefined) change.stopOn = readStatuses('retry.stop_on', fields.stop_on, problems);
  if (fields.disable_on !== undefined) change.disableOn = readStatuses('retry.disable_on', fields.disable_on, problems);
  if (problems.length > before) return undefined;
  const stopOn = change.stopOn ?? current?.stopOn ?? [];
  const disableOn = change.disableOn ?? current?.disableOn ?? [];
  const both = stopOn.find((status) => disableOn.includes(status));
  if (both !== undefined) {
    problems.push({ path: change.disableOn ? 'retry.disable_on' : 'retry.stop_on', problem: `${both} is in both stop_on and disable_on` });
    return undefined;
  }
  return change;
}

export function readExpireAfter(value: unknown, problems: ErrorDetail[]): number | null | undefined {
  if (value === null) return null;
  const ms = typeof value === 'string' ? parseDuration(value, { days: true }) : null;
  if (ms === null || ms < MIN_EXPIRY_MS || ms > MAX_EXPIRY_MS) {
    problems.push({ path: 'expire_after', problem: 'must be a duration from 1s to 30d (such as "30s", "15m", "2h", "1d"), or null for no deadline' });
    return undefined;
  }
  return ms;
}

/** Brokers answer no statuses (CONTRACT §13): a policy naming some is refused for them. */
export function brokerPolicyProblem(type: string, policy: Pick<RetryPolicyInput, 'stopOn' | 'disableOn'>): ErrorDetail | null {
  if (type === 'webhook') return null;
  if (policy.stopOn.length > 0) return { path: 'retry.stop_on', problem: 'must be empty for a broker: brokers answer no HTTP statuses' };
  if (policy.disableOn.length > 0) return { path: 'retry.disable_on', problem: 'must be empty for a broker: brokers answer no HTTP statuses' };
  return null;
}

/** The policy as views show it: the schedule written as durations (the deployment's default when none was chosen). */
export function retryView(policy: RetryPolicyInput, defaultScheduleMs: readonly number[]): { schedule: string[]; stop_on: number[]; disable_on: number[] } {
  return { schedule: (policy.scheduleMs ?? defaultScheduleMs).map(formatDurationMs), stop_on: policy.stopOn, disable_on: policy.disableOn };
}
