/**
 * The pace of one endpoint (CONTRACT §9): `max_per_second` across all workers, and the slower pace a
 * 429/503 answer imposes (AIMD). A schedule, kept in Redis in the endpoint's hash lease and run by the same
 * scripts as its breaker and leases (lease-scripts.ts), so pacing costs no extra round trip:
 *   pace hash   - `rate` (the allowed calls per second after a 429/503; absent: max_per_second, or no
 *                 pace), `tat` (GCRA's theoretical arrival time, epoch ms: when the schedule's next free
 *                 place is), `hold_until` (no call before this: a Retry-After), `drawn_for` (the
 *                 max_per_second the places were drawn for);
 *   places zset - the places handed out: job id → the start time (epoch ms) that job owns.
 * A call that finds the schedule free starts at once and moves `tat` one interval on. A call that must
 * wait is given the next free place as its own (`tat` moves on at that moment) and is delayed to exactly
 * that time: when it comes back its place is waiting for it, so no job that returns a little late loses
 * its place to one that returns early, and the pace holds by construction rather than by the spacing of
 * the jobs put back. A place is good from its time to PLACE_GRACE_MS after it; a job later than that
 * (its worker died, its endpoint was full) takes a new place at the end.
 * Bounds: places are GCRA-conforming with a burst of max(1, rate / 20) calls; a call starts within
 * PLACE_GRACE_MS after its place; so over any 10 s window at most 10 × rate + rate / 20 + rate / 4 + 1
 * calls start, under the 10.5 × rate the contract allows for any rate of 2 a second or more (at 1 a
 * second the one call a window's edge may hold is itself more than 5 %), leaving 200 ms of the 500 for
 * the jitter between a call's start and its arrival.
 */
/**
 * How late after its place a call may still start on it: half of the 5 % of a 10 s window the contract
 * allows above the pace (500 ms), the other half left to the burst and to arrival jitter.
 */
export const PLACE_GRACE_MS = 250;
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
 * Seconds of successful calls in which a backed-off pace climbs by the whole ceiling (additive increase:
 * by ceiling / PACE_CLIMB_SECONDS calls a second per second). One halving is undone in 2 s: a receiver
 * back from a short overload is paced for a moment, not for several seconds (docs/delivery-options.md).
 */
export const PACE_CLIMB_SECONDS = 4;

/**
 * Lua, inside the acquire script after the breaker: `refs` name the pace hash, the places zset,
 * max_per_second (0: none), the asking job's id ('': none, then no place is handed out) and the keys'
 * lifetime. Sets `rate` (nil: no pace), `tat`, `interval`, `ownPlace` (the job starts on its place);
 * returns {'paced', now, until, failures, lastError} when the call must wait until `until`: the job's
 * own place, or the end of a Retry-After hold.
 */
export function paceCheckLua(refs: { paceKey: string; placesKey: string; maxRate: string; job: string; keep: string }): string {
  return `
local paceFields = redis.call('HMGET', ${refs.paceKey}, 'rate', 'tat', 'hold_until', 'drawn_for')
local rate = tonumber(paceFields[1])
local maxRate = tonumber(${refs.maxRate})
local ceiling = maxRate > 0 and maxRate or ${UNPACED_START_PER_SECOND}
if maxRate > 0 and (rate == nil or rate > maxRate) then rate = maxRate end
local interval = 0
local tolerance = 0
local ownPlace = false
local tat = tonumber(paceFields[2] or '0') or 0
local holdUntil = tonumber(paceFields[3] or '0') or 0
if now < holdUntil then return {'paced', now, holdUntil, failures, lastError} end
if rate then
  interval = 1000 / rate
  tolerance = math.max(0, math.floor(rate / 20) - 1) * interval
  local job = ${refs.job}
  -- Places drawn for another max_per_second are void: the schedule starts again from here.
  if tonumber(paceFields[4] or '-1') ~= maxRate then
    redis.call('DEL', ${refs.placesKey})
    tat = math.min(tat, now + interval)
    redis.call('HSET', ${refs.paceKey}, 'tat', tat, 'drawn_for', maxRate)
    redis.call('PEXPIRE', ${refs.paceKey}, tonumber(${refs.keep}))
  end
  redis.call('ZREMRANGEBYSCORE', ${refs.placesKey}, '-inf', '(' .. (now - ${PLACE_GRACE_MS}))
  local place = job ~= '' and tonumber(redis.call('ZSCORE', ${refs.placesKey}, job)) or nil
  if place then
    if now < place then return {'paced', now, math.ceil(place), failures, lastError} end
    ownPlace = true
  elseif now < tat - tolerance then
    if job == '' then return {'paced', now, math.ceil(tat - tolerance), failures, lastError} end
    place = tat - tolerance
    -- A backed-off pace climbs while its calls succeed (paceAdjustLua): the place after this one is
    -- spaced by the pace expected then, so a backlog put back during a slow-down drains as it recovers.
    local expected = rate
    if rate < ceiling then expected = math.min(ceiling, rate + math.max(1, ceiling / ${PACE_CLIMB_SECONDS}) * (place - now) / 1000) end
    redis.call('HSET', ${refs.paceKey}, 'tat', tat + 1000 / expected)
    redis.call('ZADD', ${refs.placesKey}, place, job)
    redis.call('PEXPIRE', ${refs.placesKey}, tonumber(${refs.keep}))
    redis.call('PEXPIRE', ${refs.paceKey}, tonumber(${refs.keep}))
    return {'paced', now, math.ceil(place), failures, lastError}
  end
end
`;
}

/** Lua, on admission: the call takes its own place, or the schedule's next one. */
export function paceTakeLua(refs: { paceKey: string; placesKey: string; job: string; keep: string }): string {
  return `
if ownPlace then
  redis.call('ZREM', ${refs.placesKey}, ${refs.job})
elseif rate then
  redis.call('HSET', ${refs.paceKey}, 'tat', math.max(tat, now) + interval)
  redis.call('PEXPIRE', ${refs.paceKey}, tonumber(${refs.keep}))
end
`;
}


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
export function paceAdjustLua(refs: { paceKey: string; placesKey: string; slow: string; retryAfterMs: string; maxRate: string; signal: string; keep: string; breakerClosed: string }): string {
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
      local cut = math.max(${MIN_PER_SECOND}, current / 2)
      redis.call('HSET', ${refs.paceKey}, 'rate', cut, 'cut_at', now)
      -- The places were drawn for the faster pace: void, and the schedule starts again at the slower one.
      redis.call('DEL', ${refs.placesKey})
      local tat = tonumber(redis.call('HGET', ${refs.paceKey}, 'tat') or '0') or 0
      redis.call('HSET', ${refs.paceKey}, 'tat', math.min(tat, now + 1000 / cut))
    end
    local hold = math.min(tonumber(${refs.retryAfterMs}), ${MAX_PACE_HOLD_MS})
    if hold > 0 then
      redis.call('HSET', ${refs.paceKey}, 'hold_until', now + hold)
      redis.call('DEL', ${refs.placesKey})
    end
    redis.call('PEXPIRE', ${refs.paceKey}, tonumber(${refs.keep}))
  elseif ${refs.signal} == 'success' and backedOff then
    local raised = backedOff + math.max(1, ceiling / ${PACE_CLIMB_SECONDS}) / backedOff
    if raised >= ceiling then redis.call('HDEL', ${refs.paceKey}, 'rate') else redis.call('HSET', ${refs.paceKey}, 'rate', raised) end
  end
end
`;
}
