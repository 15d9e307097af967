import { randomBytes } from 'node:crypto';
import { parseRetrySchedule } from '@app/runtime/config/duration';

/** Settings every drill shares; each drill adds its RETRY_SCHEDULE and what it needs. */

export const ADMIN_TOKEN = 'drill-admin-token-0123456789';
export const INGEST_TOKEN = 'drill-ingest-token-0123456789';
/** One key for every process of a drill run (production refuses to start without one). */
const SECRETS_KEY = `drill:${randomBytes(32).toString('base64')}`;

/** Short, so a hanging receiver costs one second per attempt and a killed worker's jobs return fast. */
export const DELIVERY_TIMEOUT_MS = 1_000;
/** A hanging receiver answers this late: well past the worker's deadline, so the call is a time-out. */
export const HANG_MS = DELIVERY_TIMEOUT_MS + 1_500;

/** The bound of drill 6: each app must exit this soon after SIGTERM. */
export const SIGTERM_EXIT_BOUND_MS = 10_000;

export function appEnvironment(databaseUrl: string, redisUrl: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    ADMIN_TOKEN,
    INGEST_TOKEN,
    SECRETS_KEY,
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
    RECONCILE_INTERVAL: '1s',
    BREAKER_COOLDOWN: '2s',
    WORKER_CONCURRENCY: '50',
    ENDPOINT_CONCURRENCY: '50',
    // The drills' events are fresh; retention must not remove anything they count.
    RETENTION_DAYS: '3650',
    ...overrides,
  };
}

/** The delays of a drill's RETRY_SCHEDULE, read as the apps read it. */
export function scheduleMs(schedule: string): number[] {
  const delays = parseRetrySchedule(schedule);
  if (delays === null) throw new Error(`invalid drill RETRY_SCHEDULE "${schedule}"`);
  return delays;
}
