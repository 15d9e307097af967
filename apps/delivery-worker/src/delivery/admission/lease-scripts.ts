import type Redis from 'ioredis';
import { type RedisKeys, RedisScript } from '@app/runtime';
import { BREAKER_KEEP_MS, WAIT_MARK_MS } from './endpoint-keys';
import { paceAdjustLua, paceCheckLua, paceTakeLua } from './pace-schedule';

/**
 * The two scripts every call of the delivery worker runs against its endpoint's state in Redis: the
 * acquire (breaker, concurrency leases, origin share, pace) and the release (lease back, breaker fed,
 * pace adjusted). One round trip each.
 */
const REDIS_NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * KEYS: breaker hash, leases zset, origin leases zset, origin waiting zset, pace hash, endpoint wanting
 * zset, pace places zset. ARGV: lease id, lease ttl ms, concurrency limit, keep ms, force (1/0), origin
 * limit (0: none), endpoint key, waiting mark ms, max_per_second (0: none), worker id ('': no share
 * between workers; lease ids of a worker start with `<worker id>:`), job id ('': none; a job told to
 * wait for the pace owns a place in it, pace-schedule.ts), may probe (1/0: the delivery sent as the
 * half-open probe; CONTRACT §5: every other one is answered `open` and held while the breaker is not closed).
 * The endpoint's leases are shared between workers the same way: a worker refused a lease is marked as
 * wanting the endpoint for the mark's length, and while another worker is marked, one holding its share
 * (limit / workers wanting, at least 1) or more is refused. Without it, one worker that keeps handing its
 * leases from call to call holds every lease while another worker's jobs for the endpoint bounce. A
 * paced endpoint has no share: its leases are never reused, so none can be hoarded.
 * `force` (a manual redelivery's first call) passes the breaker whatever its state, but not the
 * concurrency limits, and leaves the breaker as it is: only the call's outcome changes it.
 * The origin limit is shared fairly: while other endpoints wait for room at the origin, an endpoint
 * holding its share (limit / endpoints waiting, at least 1) or more is refused, so the next free lease
 * goes to one that holds less.
 * Returns {verdict, now, until, failures, last_error, paced (1 when the endpoint has a pace), share (this worker's share of the leases while other workers
 * want the endpoint; 0 when none does), and for busy: how long the endpoint's oldest call has run (ms)};
 * verdict is one of
 *   open    - cooling down until `until`: do not call;
 *   probing - half open and another worker's probe is in flight until at most `until`;
 *   paced   - the endpoint's pace (pace-schedule.ts) lets this job's call start at `until` (its place);
 *   busy    - every concurrency lease of the endpoint, or its share of the origin's, is taken;
 *   probe   - admitted as the single half-open probe (lease expires at `until`);
 *   acquired- admitted (lease expires at `until`).
 */
const ACQUIRE_LUA = `${REDIS_NOW}
local fields = redis.call('HMGET', KEYS[1], 'state', 'retry_at', 'probe_until', 'failures', 'last_error')
local state = fields[1] or 'closed'
local failures = tonumber(fields[4] or '0') or 0
local lastError = fields[5] or ''
local probe = false
if ARGV[5] == '1' then
  -- forced: the breaker does not decide this call
elseif state == 'open' then
  local retryAt = tonumber(fields[2] or '0') or 0
  -- Only the delivery sent as the probe may end the cooldown; every other one is held.
  if now < retryAt or ARGV[12] ~= '1' then return {'open', now, retryAt, failures, lastError} end
  probe = true
elseif state == 'half_open' then
  local probeUntil = tonumber(fields[3] or '0') or 0
  if ARGV[12] ~= '1' then return {'open', now, probeUntil, failures, lastError} end
  if now < probeUntil then return {'probing', now, probeUntil, failures, lastError} end
  probe = true
end
${paceCheckLua({ paceKey: 'KEYS[5]', placesKey: 'KEYS[7]', maxRate: 'ARGV[9]', job: 'ARGV[11]', keep: 'ARGV[4]' })}
local paced = rate and 1 or 0
local leaseTtl = tonumber(ARGV[2])
-- A waiting set (the origin's endpoints, the endpoint's workers): members other than member whose mark
-- has not lapsed, and whether member itself is marked.
local function othersWaiting(key, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local others = redis.call('ZCARD', key)
  local marked = redis.call('ZSCORE', key, member) ~= false
  if marked then others = others - 1 end
  return others, marked
end
-- member was refused for want of room: it counts as waiting for the mark's length.
local function markWaiting(key, member)
  local markMs = tonumber(ARGV[8])
  redis.call('ZADD', key, now + markMs, member)
  redis.call('PEXPIRE', key, markMs + 1000)
end
-- A fair share of total leases when others wait too (at least 1).
local function shareOf(total, others)
  return math.max(1, math.floor(total / (others + 1)))
end
-- How long the endpoint's oldest call (a lease taken leaseTtl before its expiry) has run, any worker's.
local function oldestCallMs(leases, at, ttl)
  local oldest = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if #oldest < 2 then return 0 end
  return math.max(0, at - (tonumber(oldest[2]) - ttl))
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local mine = redis.call('ZCARD', KEYS[2])
local limit = tonumber(ARGV[3])
local worker = ARGV[10]
local workerShare = 0
-- A paced endpoint's leases go back to Redis after every call (none is kept for reuse), so no worker
-- can hoard them: a share would only refuse calls while the endpoint has room, and each refusal
-- costs the job its place in the pace.
if worker ~= '' and tonumber(ARGV[9]) == 0 then
  local othersWanting = 0
  local marked = false
  -- Uncontended (nobody marked), this costs one ZCARD.
  if redis.call('ZCARD', KEYS[6]) > 0 then othersWanting, marked = othersWaiting(KEYS[6], worker) end
  local held = 0
  if othersWanting > 0 then
    workerShare = shareOf(limit, othersWanting)
    local own = worker .. ':'
    for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      if string.sub(id, 1, #own) == own then held = held + 1 end
    end
  end
  if mine >= limit or (workerShare > 0 and held >= workerShare) then
    markWaiting(KEYS[6], worker)
    return {'busy', now, 0, failures, lastError, 0, workerShare, oldestCallMs(KEYS[2], now, leaseTtl)}
  end
  if marked and (workerShare == 0 or held + 1 >= workerShare) then redis.call('ZREM', KEYS[6], worker) end
elseif mine >= limit then
  return {'busy', now, 0, failures, lastError, 0, 0, oldestCallMs(KEYS[2], now, leaseTtl)}
end
local originLimit = tonumber(ARGV[6])
if originLimit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local others = othersWaiting(KEYS[4], ARGV[7])
  local share = shareOf(originLimit, others)
  if redis.call('ZCARD', KEYS[3]) >= originLimit or (others > 0 and mine >= share) then
    markWaiting(KEYS[4], ARGV[7])
    return {'busy', now, 0, failures, lastError, 0, workerShare}
  end
  redis.call('ZREM', KEYS[4], ARGV[7])
end
${paceTakeLua({ paceKey: 'KEYS[5]', placesKey: 'KEYS[7]', job: 'ARGV[11]', keep: 'ARGV[4]' })}
local expiresAt = now + leaseTtl
redis.call('ZADD', KEYS[2], expiresAt, ARGV[1])
redis.call('PEXPIRE', KEYS[2], leaseTtl + 1000)
if originLimit > 0 then
  redis.call('ZADD', KEYS[3], expiresAt, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], leaseTtl + 1000)
end
if probe then
  redis.call('HSET', KEYS[1], 'state', 'half_open', 'probe', ARGV[1], 'probe_until', expiresAt)
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
  return {'probe', now, expiresAt, failures, lastError, paced, workerShare}
end
return {'acquired', now, expiresAt, failures, lastError, paced, workerShare}
`;

/**
 * KEYS: breaker hash, leases zset, origin leases zset, pace hash, pace places zset. ARGV: lease id, signal
 * (success|failure|neutral), failure threshold, cooldown ms, error text, keep ms, slow down (1/0: the
 * answer was 429/503), Retry-After ms (0: none), max_per_second (0: none). Frees the lease (at the
 * origin too), adjusts the pace (pace-schedule.ts) and feeds the breaker:
 *   success - the endpoint answers: close the breaker and reset the count;
 *   failure - count it; open when the count reaches the threshold while closed, or when the
 *             half-open probe itself failed;
 *   neutral - the outcome says nothing about the endpoint's health (e.g. the target was refused);
 *             a neutral probe just lets the next caller probe.
 * Returns {change, failures, retry_at}; change is opened, closed, counted or unchanged.
 */
const RELEASE_LUA = `${REDIS_NOW}
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local signal = ARGV[2]
local fields = redis.call('HMGET', KEYS[1], 'state', 'failures', 'probe')
local state = fields[1] or 'closed'
${paceAdjustLua({ paceKey: 'KEYS[4]', placesKey: 'KEYS[5]', slow: 'ARGV[7]', retryAfterMs: 'ARGV[8]', maxRate: 'ARGV[9]', signal: 'signal', keep: 'ARGV[6]', breakerClosed: "state == 'closed'" })}
if signal == 'neutral' then
  -- A probe that learnt nothing hands the probe role to the next caller instead of blocking it.
  if state == 'half_open' and fields[3] == ARGV[1] then redis.call('HDEL', KEYS[1], 'probe', 'probe_until') end
  return {'unchanged', 0, 0}
end
local keep = tonumber(ARGV[6])
if signal == 'success' then
  if state ~= 'closed' or (tonumber(fields[2] or '0') or 0) > 0 then
    redis.call('HSET', KEYS[1], 'state', 'closed', 'failures', 0)
    redis.call('HDEL', KEYS[1], 'opened_at', 'retry_at', 'probe', 'probe_until')
    redis.call('PEXPIRE', KEYS[1], keep)
    if state ~= 'closed' then return {'closed', 0, 0} end
  end
  return {'unchanged', 0, 0}
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'last_error', ARGV[5])
local probeFailed = state == 'half_open' and fields[3] == ARGV[1]
if probeFailed or (state == 'closed' and failures >= tonumber(ARGV[3])) then
  local retryAt = now + tonumber(ARGV[4])
  redis.call('HSET', KEYS[1], 'state', 'open', 'opened_at', now, 'retry_at', retryAt)
  redis.call('HDEL', KEYS[1], 'probe', 'probe_until')
  redis.call('PEXPIRE', KEYS[1], keep)
  return {'opened', failures, retryAt}
end
if state == 'closed' then redis.call('HSET', KEYS[1], 'state', 'closed') end
redis.call('PEXPIRE', KEYS[1], keep)
return {'counted', failures, 0}
`;

const ACQUIRE = new RedisScript(ACQUIRE_LUA);
const RELEASE = new RedisScript(RELEASE_LUA);

export type LeaseVerdict = 'open' | 'probing' | 'paced' | 'busy' | 'probe' | 'acquired';

export interface LeaseAnswer {
  verdict: LeaseVerdict;
  /** Redis server time of the answer (epoch ms): delays are `until - serverNow`, immune to local clock skew. */
  serverNow: number;
  /** open: end of the cooldown; probing: latest end of the probe; probe/acquired: lease expiry; busy: 0. */
  until: number;
  consecutiveFailures: number;
  lastError: string | null;
  /** The endpoint has a pace (max_per_second or a backed-off rate): every call must go through Redis. */
  paced: boolean;
  /** How many of the endpoint's leases this worker may hold while other workers want it too (null: no other worker does). */
  workerShare: number | null;
  /** Verdict busy: how long the endpoint's oldest call in flight (any worker's) has run, in ms. */
  oldestCallMs: number;
}

/**
 * One round trip: checks the breaker and, when it lets the call through, takes a concurrency lease of
 * the endpoint and (with `originLimit`) of its origin.
 */
export async function acquireEndpointLease(
  redis: Redis,
  keys: RedisKeys,
  endpointKey: string,
  lease: {
    id: string;
    ttlMs: number;
    limit: number;
    originLimit?: number;
    maxPerSecond?: number | null;
    force?: boolean;
    worker?: string;
    job?: string;
    mayProbe?: boolean;
  },
): Promise<LeaseAnswer> {
  const reply = (await ACQUIRE.run(
    redis,
    [
      keys.breaker(endpointKey),
      keys.leases(endpointKey),
      keys.originLeases(endpointKey),
      keys.originWaiting(endpointKey),
      keys.pace(endpointKey),
      keys.wanting(endpointKey),
      keys.pacePlaces(endpointKey),
    ],
    [
      lease.id,
      Math.max(1, Math.round(lease.ttlMs)),
      lease.limit,
      BREAKER_KEEP_MS,
      lease.force ? 1 : 0,
      lease.originLimit ?? 0,
      endpointKey,
      WAIT_MARK_MS,
      lease.maxPerSecond ?? 0,
      lease.worker ?? '',
      lease.job ?? '',
      lease.mayProbe ? 1 : 0,
    ],
  )) as [LeaseVerdict, number, number, number, string, number?, number?, number?];
  const workerShare = Number(reply[6] ?? 0);
  return {
    verdict: reply[0],
    serverNow: Number(reply[1]),
    until: Number(reply[2]),
    consecutiveFailures: Number(reply[3]),
    lastError: reply[4] === '' ? null : reply[4],
    paced: reply[0] === 'paced' || Number(reply[5] ?? 0) === 1,
    workerShare: workerShare > 0 ? workerShare : null,
    oldestCallMs: Number(reply[7] ?? 0),
  };
}

export type BreakerSignal = 'success' | 'failure' | 'neutral';

export interface ReleaseAnswer {
  change: 'opened' | 'closed' | 'counted' | 'unchanged';
  consecutiveFailures: number;
  /** Epoch ms the breaker stays open until, when `change` is opened. */
  retryAt: number | null;
}

/** One round trip: frees the lease and records the call's outcome in the breaker. */
export async function releaseEndpointLease(
  redis: Redis,
  keys: RedisKeys,
  endpointKey: string,
  release: {
    leaseId: string;
    signal: BreakerSignal;
    failureThreshold: number;
    cooldownMs: number;
    error: string | null;
    /** The answer was 429 or 503: slow the endpoint down, holding it for `retryAfterMs` when given. */
    slowDown?: { retryAfterMs: number | null } | null;
    maxPerSecond?: number | null;
  },
): Promise<ReleaseAnswer> {
  const reply = (await RELEASE.run(
    redis,
    [keys.breaker(endpointKey), keys.leases(endpointKey), keys.originLeases(endpointKey), keys.pace(endpointKey), keys.pacePlaces(endpointKey)],
    [
      release.leaseId,
      release.signal,
      release.failureThreshold,
      Math.max(0, Math.round(release.cooldownMs)),
      (release.error ?? '').slice(0, 500),
      BREAKER_KEEP_MS,
      release.slowDown ? 1 : 0,
      Math.max(0, Math.round(release.slowDown?.retryAfterMs ?? 0)),
      release.maxPerSecond ?? 0,
    ],
  )) as [ReleaseAnswer['change'], number, number];
  return { change: reply[0], consecutiveFailures: Number(reply[1]), retryAt: Number(reply[2]) > 0 ? Number(reply[2]) : null };
}

/**
 * Keeps the index of open endpoints in step with a breaker change the worker just caused (`opened`
 * adds the endpoint, `closed` removes it). Outside the breaker script on purpose: the index is one key
 * for all endpoints, and a missed update only makes the list late (the next failed probe adds it again,
 * and listOpenEndpoints drops members whose breaker is closed).
 */
export async function indexBreakerChange(redis: Redis, keys: RedisKeys, endpointKey: string, change: ReleaseAnswer['change']): Promise<void> {
  const key = keys.openEndpoints();
  if (change === 'opened') await redis.sadd(key, endpointKey);
  else if (change === 'closed') await redis.srem(key, endpointKey);
}
