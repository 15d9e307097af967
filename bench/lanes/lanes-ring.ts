import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';

/**
 * The core of per-endpoint lanes with a ring of ready lanes (the shape of BullMQ Pro groups), enough to
 * measure its cost beside BullMQ: one list of job ids per lane, a ring (list) of the lanes that have
 * waiting ids, a set that keeps a lane in the ring once, and an in-flight sorted set scored by lock
 * deadline (what stalled-job recovery would scan). Not built into the service: delays, retries, locks
 * renewed while a call runs, stalled recovery, dedup of re-added steps and the admin views would all
 * have to be written around it (docs/lanes.md). All keys share one hash tag, as one queue shard would.
 */
const ADD = `
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1] .. ARGV[1], ARGV[i]) end
if redis.call('SADD', KEYS[3], ARGV[1]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 1`;

/** Takes up to ARGV[1] ids, one per lane per turn of the ring, each locked until ARGV[2]. */
const TAKE = `
local taken = {}
local want = tonumber(ARGV[1])
while #taken < want do
  local lane = redis.call('LPOP', KEYS[2])
  if not lane then break end
  local id = redis.call('LPOP', KEYS[1] .. lane)
  if id then
    taken[#taken + 1] = lane .. ':' .. id
    redis.call('ZADD', KEYS[4], ARGV[2], lane .. ':' .. id)
  end
  if redis.call('LLEN', KEYS[1] .. lane) > 0 then redis.call('RPUSH', KEYS[2], lane) else redis.call('SREM', KEYS[3], lane) end
end
return taken`;

const TAKE_BATCH = 50;
const LOCK_MS = 30_000;

export interface LanesRingFigures {
  addPerSecond: number;
  takePerSecond: number;
  /** Distinct lanes among the first `lanes` ids taken: round robin gives every lane one turn first. */
  firstTurns: number;
}

/** Adds `jobs` ids spread over `lanes` lanes in batches of 500, then takes them all with `concurrency` in hand, acknowledging per batch. */
export async function measureLanesRing(url: string, jobs: number, lanes: number, concurrency: number): Promise<LanesRingFigures> {
  const redis = new Redis(url);
  const tag = `{bench-ring-${process.pid}-${lanes}}`;
  const keys = [`${tag}:lane:`, `${tag}:ring`, `${tag}:ready`, `${tag}:inflight`];
  redis.defineCommand('laneAdd', { numberOfKeys: 3, lua: ADD });
  redis.defineCommand('laneTake', { numberOfKeys: 4, lua: TAKE });
  const commands = redis as unknown as {
    laneAdd: (...args: (string | number)[]) => Promise<number>;
    laneTake: (...args: (string | number)[]) => Promise<string[]>;
  };
  try {
    const addStart = performance.now();
    for (let from = 0; from < jobs; from += 500) {
      const byLane = new Map<number, string[]>();
      for (let id = from; id < Math.min(jobs, from + 500); id += 1) {
        const lane = id % lanes;
        byLane.set(lane, [...(byLane.get(lane) ?? []), String(id)]);
      }
      await Promise.all([...byLane].map(([lane, ids]) => commands.laneAdd(keys[0], keys[1], keys[2], String(lane), ...ids)));
    }
    const addMs = performance.now() - addStart;

    const takeStart = performance.now();
    let done = 0;
    let firstTurns = 0;
    let inHand = 0;
    const finished: string[] = [];
    while (done < jobs) {
      const room = concurrency - inHand;
      const taken = room >= TAKE_BATCH ? await commands.laneTake(...keys, TAKE_BATCH, Date.now() + LOCK_MS) : [];
      if (done === 0 && firstTurns === 0) firstTurns = new Set(taken.slice(0, lanes).map((id) => id.split(':')[0])).size;
      inHand += taken.length;
      // The work itself is nothing, as for the BullMQ shapes: what is measured is the queue's cost.
      await Promise.all(taken.map(async (id) => finished.push(await Promise.resolve(id))));
      if (finished.length > 0) {
        const acknowledged = finished.splice(0);
        await redis.zrem(keys[3], ...acknowledged);
        inHand -= acknowledged.length;
        done += acknowledged.length;
      }
      if (taken.length === 0 && done < jobs && room >= TAKE_BATCH) throw new Error(`the ring ran dry after ${done} of ${jobs}`);
    }
    const takeMs = performance.now() - takeStart;
    return { addPerSecond: jobs / (addMs / 1000), takePerSecond: jobs / (takeMs / 1000), firstTurns };
  } finally {
    const left = await redis.keys(`${tag}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  }
}
