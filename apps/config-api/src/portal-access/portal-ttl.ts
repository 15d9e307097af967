import { parseDuration } from '@app/runtime';

export const DEFAULT_LINK_TTL = '15m';
export const MAX_LINK_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a portal session lasts once a code is traded for it (CONTRACT §10 leaves it open). */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export const LINK_TTL_PROBLEM = 'ttl must be a duration from 1s to 24h such as 15m, 2h or 3600s';

/** The link's lifetime in ms, or null when `ttl` is not a duration from 1 s to 24 h. Absent: 15 minutes. */
export function parseLinkTtl(ttl: unknown): number | null {
  if (ttl === undefined) return parseDuration(DEFAULT_LINK_TTL);
  if (typeof ttl !== 'string' || ttl.length > 16) return null;
  const ms = parseDuration(ttl);
  return ms !== null && ms >= 1000 && ms <= MAX_LINK_TTL_MS ? ms : null;
}
