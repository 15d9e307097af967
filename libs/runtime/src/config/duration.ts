const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses `250ms`, `10s`, `5m`, `1h` (and `5d` when `days` is allowed: only settings measured in days
 * take it, so a retry delay of days is not accepted by accident). Returns null when the text is not such a duration.
 */
export function parseDuration(text: string, { days = false }: { days?: boolean } = {}): number | null {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match || (match[2] === 'd' && !days)) return null;
  return Number(match[1]) * UNIT_MS[match[2]];
}

/** Parses a comma separated RETRY_SCHEDULE into delays in milliseconds; null when any item is bad. */
export function parseRetrySchedule(text: string): number[] | null {
  const items = text.split(',').map((item) => item.trim());
  if (items.length === 0 || items.some((item) => item === '')) return null;
  const delays = items.map((item) => parseDuration(item));
  return delays.every((delay): delay is number => delay !== null) ? delays : null;
}

/** `432000000` → `5d`: a duration as settings and the API write it (the largest unit that divides it). */
export function formatDurationMs(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
