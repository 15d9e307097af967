import { Redis } from 'ioredis';

/** What `INFO commandstats` and `INFO stats` count, at one moment. */
export interface RedisCounters {
  calls: Map<string, number>;
  inputBytes: number;
  outputBytes: number;
}

/** Redis commands and bytes over an interval, divided by the deliveries made in it. */
export interface RedisPerDelivery {
  deliveries: number;
  commands: number;
  /** The commands with most calls per delivery, most first. */
  top: Array<{ command: string; perDelivery: number }>;
  inputBytes: number;
  outputBytes: number;
}

/** Parses `cmdstat_<name>:calls=N,…` lines and the byte totals; exported for its unit test. */
export function parseInfo(text: string): RedisCounters {
  const calls = new Map<string, number>();
  let inputBytes = 0;
  let outputBytes = 0;
  for (const line of text.split(/\r?\n/)) {
    const command = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (command) calls.set(command[1] ?? '', Number(command[2]));
    const bytes = /^total_net_(input|output)_bytes:(\d+)/.exec(line);
    if (bytes?.[1] === 'input') inputBytes = Number(bytes[2]);
    else if (bytes?.[1] === 'output') outputBytes = Number(bytes[2]);
  }
  return { calls, inputBytes, outputBytes };
}

/**
 * Reads the server's counters. They are the whole Redis server's, not the bench's prefix: anything else
 * using this Redis in the interval (another bench, tests) is counted too, and so is the reading itself
 * (one INFO per snapshot). The bench keys its data by prefix only; run it under the shared lock.
 */
export async function redisCounters(url: string): Promise<RedisCounters> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    return parseInfo(`${await redis.info('commandstats')}\n${await redis.info('stats')}`);
  } finally {
    redis.disconnect();
  }
}

export function perDelivery(before: RedisCounters, after: RedisCounters, deliveries: number, topCount = 8): RedisPerDelivery {
  const per = Math.max(1, deliveries);
  const deltas = [...after.calls].map(([command, calls]) => ({ command, perDelivery: (calls - (before.calls.get(command) ?? 0)) / per })).filter((entry) => entry.perDelivery > 0);
  deltas.sort((a, b) => b.perDelivery - a.perDelivery);
  return {
    deliveries,
    commands: deltas.reduce((sum, entry) => sum + entry.perDelivery, 0),
    top: deltas.slice(0, topCount),
    inputBytes: (after.inputBytes - before.inputBytes) / per,
    outputBytes: (after.outputBytes - before.outputBytes) / per,
  };
}

/** Runs `measure` between two readings of the counters; `deliveries` tells how many deliveries it made. */
export async function withRedisCounts<T>(url: string, measure: () => Promise<T>, deliveries: (result: T) => number): Promise<{ result: T; redis: RedisPerDelivery }> {
  const before = await redisCounters(url);
  const result = await measure();
  const after = await redisCounters(url);
  return { result, redis: perDelivery(before, after, deliveries(result)) };
}

/** One line for a scenario's notes. */
export function redisText(label: string, redis: RedisPerDelivery): string {
  const top = redis.top.map((entry) => `${entry.command} ${entry.perDelivery.toFixed(2)}`).join(', ');
  return (
    `${label}: ${redis.commands.toFixed(1)} Redis commands per delivery (${top}); ${Math.round(redis.inputBytes)} bytes in, ` +
    `${Math.round(redis.outputBytes)} bytes out per delivery (server-wide INFO counters: other users of this Redis in the interval count too)`
  );
}
