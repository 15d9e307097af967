import type Redis from 'ioredis';
import { RedisKeys } from '../redis/redis-keys';

/**
 * The pace of one endpoint (CONTRACT §9): `max_per_second` across all workers, and the slower pace a
 * 429/503 answer imposes (AIMD). Kept in one Redis hash per endpoint, in the endpoint's slot, and
 * read and written by the same scripts as its breaker and leases (endpoint-slot.ts), so pacing costs
 * no extra round trip:
 *   rate       - the allowed calls per second after a 429/503 (absent: max_per_second, or no pace);
 *   tat        - GCRA's theoretical arrival time (epoch ms) of the next call;
 *   hold_until - no call before this (a Retry-After), epoch ms.
 * GCRA with a burst of max(1, rate / 20) calls: over any 10 s window at most 10 × rate + 1 + rate / 20
 * calls start, which leaves most of the 5 % the contract allows for the jitter between a call's start
 * and its arrival (at 20 a second: 202 of 210, 400 ms of jitter). For rates under 10 a second the one
 * extra call a closed window may hold is itself more than 5 %.
 */
export function paceKey(prefix: string, endpointKey: string): string {
  return new RedisKeys(prefix).endpoint('pace', endpointKey);
}

/** Before the first 429/503 an endpoint without max_per_second has no known rate: its pace starts here. */
export const UNPACED_START_PER_SECOND = 100;
/** The slowest pace a run of 429/503 answers brings an endpoint down to. */
export const MIN_PER_SECOND = 0.2;
/**
 * At most one halving per this long: the calls already in flight when an endpoint starts answering 429
 * all come back with it, and they are one signal, not ten (as TCP halves once per round trip).
 */
export const DECREASE_EVERY_MS = 1_000;
/** Upper bound of a Retry-After hold on the whole endpoint (the event's own retry honours up to an hour). */
export const MAX_PACE_HOLD_MS = 60_000;

/**
 * Lua, inside the acquire script after the breaker: `PACE_KEY` and `MAX_RATE` name the pace hash and
 * max_per_second (0: none). Sets `rate` (nil: no pace), `tat`, `interval`, `tolerance`; returns
 * {'paced', now, until, failures, lastError, interval ms (0: no rate)} when the call must wait, so the
 * worker can line its waiting jobs up one interval apart.
 */
export function paceCheckLua(paceKeyRef: string, maxRateRef: string): string {
  return `
local paceFields = redis.call('HMGET', ${paceKeyRef}, 'rate', 'tat', 'hold_until')
local rate = tonumber(paceFields[1])
local maxRate = tonumber(${maxRateRef})
if maxRate > 0 and (rate == nil or rate > maxRate) then rate = maxRate end
local interval = 0
local tolerance = 0
if rate then
  interval = 1000 / rate
  tolerance = math.max(0, math.floor(rate / 20) - 1) * interval
end
local holdUntil = tonumber(paceFields[3] or '0') or 0
if now < holdUntil then return {'paced', now, holdUntil, failures, lastError, math.ceil(interval)} end
local tat = tonumber(paceFields[2] or '0') or 0
if rate and now < tat - tolerance then return {'paced', now, math.ceil(tat - tolerance), failures, lastError, math.ceil(interval)} end
`;
}

/** Lua, on admission: takes the call's place in the pace. */
export function paceTakeLua(paceKeyRef: string, keepRef: string): string {
  return `
if rate then
  redis.call('HSET', ${paceKeyRef}, 'tat', math.max(tat, now) + interval)
  redis.call('PEXPIRE', ${paceKeyRef}, tonumber(${keepRef}))
end
`;
}

/**
 * Seconds of successful calls in which a backed-off pace climbs by the whole ceiling (additive increase:
 * by ceiling / PACE_CLIMB_SECONDS calls a second per second). One halving is undone in 2 s: a receiver
 * back from a short overload is paced for a moment, not for the 5 s (10 s from the floor) a step of
 * ceiling / 10 took. With the probe rule below, a bench drain of 100,000 events after an outage put
 * 3,714 jobs back for the pace instead of 26,890 (docs/delivery-options.md).
 */
export const PACE_CLIMB_SECONDS = 4;

/**
 * Lua, in the release script: a 429/503 (`SLOW == '1'`) halves the pace (from max_per_second, the
 * current backed-off rate, or UNPACED_START_PER_SECOND; at most once per DECREASE_EVERY_MS) while the
 * breaker is closed (`BREAKER_CLOSED`: a half-open probe refused, or a call that was in flight when the
 * breaker opened, says the endpoint is down, which the breaker already handles; cutting the pace on
 * every probe of a long outage would leave the receiver at the floor pace once it is back), and holds
 * the endpoint for its Retry-After whatever the breaker's state;
 * a success raises a backed-off pace by max(1, ceiling / PACE_CLIMB_SECONDS) calls a second per second
 * of successes, and drops it once it is back at the ceiling (max_per_second, or no pace).
 */
export function paceAdjustLua(refs: { paceKey: string; slow: string; retryAfterMs: string; maxRate: string; signal: string; keep: string; breakerClosed: string }): string {
  return `
do
  local maxRate = tonumber(${refs.maxRate})
  local ceiling = maxRate > 0 and maxRate or ${UNPACED_START_PER_SECOND}
  local backedOff = tonumber(redis.call('HGET', ${refs.paceKey}, 'rate'))
  if ${refs.slow} == '1' then
    local cutAt = tonumber(redis.call('HGET', ${refs.paceKey}, 'cut_at') or '0') or 0
    if (${refs.breakerClosed}) and now - cutAt >= ${DECREASE_EVERY_MS} then
      local current = backedOff or ceiling
      if current > ceiling then current = ceiling end
      redis.call('HSET', ${refs.paceKey}, 'rate', math.max(${MIN_PER_SECOND}, current / 2), 'cut_at', now)
    end
    local hold = math.min(tonumber(${refs.retryAfterMs}), ${MAX_PACE_HOLD_MS})
    if hold > 0 then redis.call('HSET', ${refs.paceKey}, 'hold_until', now + hold) end
    redis.call('PEXPIRE', ${refs.paceKey}, tonumber(${refs.keep}))
  elseif ${refs.signal} == 'success' and backedOff then
    local raised = backedOff + math.max(1, ceiling / ${PACE_CLIMB_SECONDS}) / backedOff
    if raised >= ceiling then redis.call('HDEL', ${refs.paceKey}, 'rate') else redis.call('HSET', ${refs.paceKey}, 'rate', raised) end
  end
end
`;
}

/** The endpoint's allowed calls per second now: the backed-off rate, else max_per_second, else null (no pace). */
export async function readEndpointPace(redis: Redis, prefix: string, endpointKey: string, maxPerSecond: number | null): Promise<number | null> {
  const stored = Number(await redis.hget(paceKey(prefix, endpointKey), 'rate'));
  const backedOff = Number.isFinite(stored) && stored > 0 ? stored : null;
  if (backedOff === null) return maxPerSecond;
  const rate = maxPerSecond === null ? backedOff : Math.min(backedOff, maxPerSecond);
  return Math.round(rate * 100) / 100;
}
