import { validationFailed } from '@app/runtime';

/**
 * ISO-8601 calendar timestamps: a date, or a date and time with an optional offset. A time without
 * an offset is read as UTC, so the answer never depends on the server's time zone.
 */
const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseTimestamp(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const match = TIMESTAMP_PATTERN.exec(value.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second, zone] = match;
  // Date.parse rolls 2025-02-30 over into March; a calendar check refuses it instead.
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) return null;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return null;
  let text = value.trim().toUpperCase().replace(' ', 'T');
  if (hour !== undefined && zone === undefined) text += 'Z';
  else if (zone !== undefined && /^[+-]\d{4}$/.test(zone)) text = `${text.slice(0, -5)}${zone.slice(0, 3)}:${zone.slice(3)}`;
  const parsed = new Date(text);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/**
 * The times a query is bounded to. Event seqs are the insert time in milliseconds shifted by 20 bits,
 * a bigint until about 2248, and no row can be older than 1970: a far past or future date (0001-01-01,
 * 2300-01-01) bounds the query at these rather than overflowing a bigint (CONTRACT §3).
 */
export const EARLIEST_QUERY_TIME = new Date(Date.UTC(1970, 0, 1));
export const LATEST_QUERY_TIME = new Date(Date.UTC(2200, 0, 1));

/** A parsed timestamp held inside [EARLIEST_QUERY_TIME, LATEST_QUERY_TIME]. */
export function boundedTimestamp(value: string): Date | null {
  const parsed = parseTimestamp(value);
  if (!parsed) return null;
  return new Date(Math.min(Math.max(parsed.getTime(), EARLIEST_QUERY_TIME.getTime()), LATEST_QUERY_TIME.getTime()));
}

/** since/until already passed the DTO, and are bounded (see above); an empty or inverted range is a 422 naming `until`. */
export function timeRange(since: string | undefined, until: string | undefined): { since: Date | null; until: Date | null } {
  const range = { since: since === undefined ? null : boundedTimestamp(since), until: until === undefined ? null : boundedTimestamp(until) };
  if (range.since && range.until && range.until.getTime() <= range.since.getTime()) {
    throw validationFailed([{ path: 'until', problem: 'until must be later than since' }]);
  }
  return range;
}
