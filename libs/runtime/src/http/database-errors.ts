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

/** `SELECT events`, `INSERT accounts`…: the statement's verb and first table, from its text (never its parameters). */
export function statementName(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'statement';
  const table = /\b(?:FROM|INTO|UPDATE)\s+("?[A-Za-z_][\w.]*"?)/i.exec(sql)?.[1]?.replace(/"/g, '');
  return table ? `${verb} ${table}` : verb;
}

/**
 * What may be logged of an error: for a database error its SQLSTATE and the statement's name, never its
 * text's values, bound parameters or the server's message (which quotes values: `Key (email)=(…)`,
 * `invalid input syntax for type …: "…"`); for anything else, the error itself.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (error instanceof QueryFailedError) {
    return { database_error: { sqlstate: sqlState(error), statement: statementName(error.query) } };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && 'severity' in error) {
    return { database_error: { sqlstate: code } }; // a node-postgres error outside TypeORM
  }
  return { err: error };
}

/** loggableError as one line of text, for the Nest loggers that take a message (a database error's SQLSTATE and statement only). */
export function loggableErrorText(error: unknown): string {
  const loggable = loggableError(error);
  const database = loggable.database_error as { sqlstate: string | null; statement?: string } | undefined;
  if (database) return `database error ${database.sqlstate ?? 'without SQLSTATE'}${database.statement ? ` in ${database.statement}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
