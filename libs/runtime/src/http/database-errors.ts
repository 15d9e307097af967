import { QueryFailedError } from 'typeorm';

/** SQLSTATE classes meaning "the database cannot serve you now", not "your statement is wrong". */
const UNAVAILABLE_SQLSTATE_CLASSES = new Set([
  '08', // connection exception
  '53', // insufficient resources (too many connections, out of memory, disk full)
  '57', // operator intervention (admin shutdown, crash shutdown, cannot connect now, query canceled)
  '58', // system error
]);
const UNAVAILABLE_SQLSTATES = new Set([
  '55000', // "database ... is not currently accepting connections" (ALLOW_CONNECTIONS false)
  '3D000', // database does not exist (dropped or not yet created)
]);
/** Errors raised by the socket or by node-postgres's pool, which carry no SQLSTATE. */
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection (is )?closed|client has encountered a connection error|cannot use a pool after calling end|not queryable/i;

/**
 * True when a database error means PostgreSQL is unreachable or refusing work, so the caller can
 * answer 503 (retry later) instead of 500. Errors about the statement itself stay false: those are bugs.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return UNAVAILABLE_SQLSTATE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('28');
  }
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE...
  const message = cause instanceof Error ? cause.message : '';
  return CONNECTION_MESSAGES.test(message);
}

/** The SQLSTATE of a failed query, or null. */
export function sqlState(error: unknown): string | null {
  if (!(error instanceof QueryFailedError)) return null;
  const code = (error.driverError as { code?: unknown }).code;
  return typeof code === 'string' ? code : null;
}
