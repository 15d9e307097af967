import { createHash } from 'node:crypto';

/** The fixed workload: SHA-256 over a 1 MiB buffer, this many times. */
export const SPEED_ROUNDS = 300;
const BUFFER = Buffer.alloc(1024 * 1024, 7);

/**
 * Milliseconds this process takes for the fixed workload now: the same work on every run, so a slow
 * day (a busy or throttled machine) shows beside the figures it slowed.
 */
export function speedMs(): number {
  const started = process.hrtime.bigint();
  for (let round = 0; round < SPEED_ROUNDS; round += 1) createHash('sha256').update(BUFFER).digest();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export function speedText(ms: number): string {
  return `speed: sha256 of 1 MiB × ${SPEED_ROUNDS} took ${Math.round(ms)} ms`;
}
