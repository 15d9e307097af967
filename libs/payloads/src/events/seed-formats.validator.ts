import { isPlainObject } from '../plain-object';

/**
 * Pure checks for the seed's special formats and maps. The decorators in field.decorators.ts wrap
 * them; keeping them free of class-validator makes them cheap to test and to reuse.
 */

/** A problem below a field: `key` is appended to the field's path (`changes` + `level` → `changes.level`). */
export interface KeyedProblem {
  key?: string;
  problem: string;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export function isIntegerArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => Number.isInteger(item));
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ZONED_TIMESTAMP = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) ([+-])(\d{2})(\d{2})$/;
const DURATION_SECONDS = /^\d+s$/;

/** The shape alone would let `2024-02-30 25:00:00` through; the components must name a real instant. */
export function isSeedTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  return day <= daysInMonth(year, month);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Computed by hand: Date.UTC maps years 0–99 to 1900–1999, which would misjudge their Februaries. */
function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

/** `YYYY-MM-DD HH:MM:SS +ZZZZ` (ShutQueue_create); real offsets run from -1200 to +1400. */
export function isSeedZonedTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = ZONED_TIMESTAMP.exec(value);
  if (!match) return false;
  const [, local, , hours, minutes] = match;
  return isSeedTimestamp(local) && Number(hours) <= 14 && Number(minutes) <= 59;
}

/** `<n>s`, e.g. `90s` (ShutQueue_create queue_seconds). */
export function isDurationSeconds(value: unknown): value is string {
  return typeof value === 'string' && DURATION_SECONDS.test(value);
}

/** null or a JSON scalar: the seed types agent_invite_vote_count, search_keyword, custom_channel only so loosely. */
export function isScalarOrNull(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

const CUSTOM_FIELD_KEY = /^(SelectField|TextField)_\d+$/;

/** customer / organization `custom_fields`: select fields hold arrays of strings, text fields strings. */
export function customFieldMapProblems(value: unknown): KeyedProblem[] {
  if (!isPlainObject(value)) return [{ problem: 'must be an object' }];
  const problems: KeyedProblem[] = [];
  for (const [key, fieldValue] of Object.entries(value)) {
    const kind = CUSTOM_FIELD_KEY.exec(key)?.[1];
    if (kind === undefined) problems.push({ key, problem: 'must be a custom field name SelectField_<n> or TextField_<n>' });
    else if (kind === 'SelectField' && !isStringArray(fieldValue)) problems.push({ key, problem: 'must be an array of strings' });
    else if (kind === 'TextField' && typeof fieldValue !== 'string') problems.push({ key, problem: 'must be a string' });
  }
  return problems;
}

/** Update events: every changed attribute maps to `[original value, new value]`; the values themselves are free. */
export function changesMapProblems(value: unknown): KeyedProblem[] {
  if (!isPlainObject(value)) return [{ problem: 'must be an object mapping each changed field to [original value, new value]' }];
  const problems: KeyedProblem[] = [];
  for (const [key, change] of Object.entries(value)) {
    if (!Array.isArray(change) || change.length !== 2) {
      problems.push({ key, problem: 'must be a two-element array [original value, new value]' });
    }
  }
  return problems;
}

/** Close entry `note_custom_fields`: field name to string value; the seed puts no rule on the names. */
export function stringMapProblems(value: unknown): KeyedProblem[] {
  if (!isPlainObject(value)) return [{ problem: 'must be an object' }];
  const problems: KeyedProblem[] = [];
  for (const [key, fieldValue] of Object.entries(value)) {
    if (typeof fieldValue !== 'string') problems.push({ key, problem: 'must be a string' });
  }
  return problems;
}

/**
 * `im_log_infos[].content`: a string holding a JSON object. `type` is required because it is what
 * tells a receiver how to read `data`; the other documented keys are checked only when present.
 */
export function chatContentProblems(value: unknown): string[] {
  if (typeof value !== 'string') return ['must be a string holding a JSON object'];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return ['must be a string holding a JSON object (it is not valid JSON)'];
  }
  if (!isPlainObject(parsed)) return ['must be a string holding a JSON object (it holds JSON that is not an object)'];
  const problems: string[] = [];
  if (typeof parsed.type !== 'string') problems.push('its JSON field type must be a string');
  if (parsed.platform !== undefined && typeof parsed.platform !== 'string') problems.push('its JSON field platform must be a string');
  const data = parsed.data;
  if (data !== undefined) {
    if (!isPlainObject(data)) {
      problems.push('its JSON field data must be an object');
    } else {
      if (data.content !== undefined && typeof data.content !== 'string') problems.push('its JSON field data.content must be a string');
      if (data.duration !== undefined && data.duration !== null && typeof data.duration !== 'number') {
        problems.push('its JSON field data.duration must be a number or null');
      }
      if (data.origin_url !== undefined && typeof data.origin_url !== 'string') problems.push('its JSON field data.origin_url must be a string');
    }
  }
  return problems;
}
