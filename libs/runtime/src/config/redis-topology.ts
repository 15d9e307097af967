export interface HostPort {
  host: string;
  port: number;
}

/** Credentials for the data nodes (cluster nodes, or the primary and replicas sentinels name); ACL user optional. */
export interface RedisAuth {
  username?: string;
  password?: string;
}

/** Which Redis deployment every process talks to; standalone uses REDIS_URL (credentials included). */
export type RedisTopology =
  | { kind: 'standalone' }
  | { kind: 'cluster'; nodes: HostPort[]; auth: RedisAuth }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; auth: RedisAuth; sentinelPassword?: string };

/** How the delivery queue is split: `count` BullMQ queues, of which this process consumes `consumed`. */
export interface QueueShards {
  count: number;
  /** Ascending shard numbers; every shard unless WORKER_QUEUE_SHARDS names a subset. */
  consumed: number[];
}

/**
 * DELIVERY_QUEUE_SHARDS when unset. A cluster spreads the shards over its nodes. One node gains nothing
 * from more than one: sparser shards make each job a blocking read and a fetch of its own instead of
 * coming with the previous job's completion, and split every batch's adds (15 % more CPU an event on
 * single posts with 8, docs/kubernetes.md), while the fair-turn priorities keep accounts apart as well
 * in one queue as in eight (noisy-neighbour bench).
 */
export function defaultQueueShards(topology: RedisTopology): number {
  return topology.kind === 'cluster' ? CLUSTER_QUEUE_SHARDS : 1;
}

export const CLUSTER_QUEUE_SHARDS = 8;

/**
 * The default before it followed the topology: a deployment upgraded without the setting may still
 * hold jobs in shards up to this, which its workers drain (DeliveryQueues.strayShards).
 */
export const EARLIER_DEFAULT_QUEUE_SHARDS = 8;
const MAX_QUEUE_SHARDS = 256;

type Source = Record<string, string | undefined>;

function raw(source: Source, name: string): string | undefined {
  const value = source[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `host:port` or `[ipv6]:port`; null when malformed. */
function parseHostPort(text: string): HostPort | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text.trim());
  if (!match) return null;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1] ?? match[2], port };
}

function hostList(source: Source, name: string, problems: string[]): HostPort[] | null {
  const value = raw(source, name);
  if (value === undefined) return null;
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  const parsed = entries.map(parseHostPort);
  const bad = entries.filter((_, index) => parsed[index] === null);
  if (entries.length === 0 || bad.length > 0) {
    problems.push(`${name} must be a comma separated list of host:port (got "${bad[0] ?? value}")`);
    return null;
  }
  return parsed as HostPort[];
}

/** Present keys only, so ioredis never sees `password: undefined` next to a URL's own. */
function credentials(username: string | undefined, password: string | undefined): RedisAuth {
  return { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) };
}

/**
 * REDIS_CLUSTER_NODES or REDIS_SENTINELS (with REDIS_SENTINEL_NAME); both at once is refused.
 * REDIS_USERNAME / REDIS_PASSWORD authenticate to the cluster nodes or to the primary and replicas the
 * sentinels name, REDIS_SENTINEL_PASSWORD to the sentinels themselves. A standalone Redis takes its
 * credentials in REDIS_URL, so these are refused without a cluster or sentinels rather than ignored.
 */
export function readRedisTopology(source: Source, problems: string[]): RedisTopology {
  const nodes = hostList(source, 'REDIS_CLUSTER_NODES', problems);
  const sentinels = hostList(source, 'REDIS_SENTINELS', problems);
  const name = raw(source, 'REDIS_SENTINEL_NAME') ?? 'mymaster';
  // Passwords are taken as given: spaces may be part of one.
  const auth = credentials(raw(source, 'REDIS_USERNAME'), source.REDIS_PASSWORD || undefined);
  const sentinelPassword = source.REDIS_SENTINEL_PASSWORD || undefined;
  if (raw(source, 'REDIS_CLUSTER_NODES') !== undefined && raw(source, 'REDIS_SENTINELS') !== undefined) {
    problems.push('REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: choose one Redis deployment (a cluster or sentinels)');
    return { kind: 'standalone' };
  }
  if (sentinelPassword !== undefined && raw(source, 'REDIS_SENTINELS') === undefined) {
    problems.push('REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS');
  }
  if (nodes) return { kind: 'cluster', nodes, auth };
  if (sentinels) return { kind: 'sentinel', sentinels, name, auth, ...(sentinelPassword === undefined ? {} : { sentinelPassword }) };
  if (auth.username !== undefined || auth.password !== undefined) {
    problems.push('REDIS_USERNAME and REDIS_PASSWORD apply to REDIS_CLUSTER_NODES or REDIS_SENTINELS; for a standalone Redis put them in REDIS_URL (redis://user:password@host:port)');
  }
  return { kind: 'standalone' };
}

/**
 * The prefix goes into BullMQ and endpoint keys around hash tags (`{…}`); braces of its own would
 * move the tag and put keys a script uses together into different cluster slots.
 */
export function checkRedisPrefix(prefix: string, problems: string[]): void {
  if (/[{}\s]/.test(prefix)) problems.push(`REDIS_PREFIX must not contain braces or spaces (got "${prefix}")`);
}

/** `0-3,6` → [0,1,2,3,6]; null when malformed or out of 0..count-1. */
export function parseShardList(text: string, count: number): number[] | null {
  const shards = new Set<number>();
  for (const part of text.split(',').map((entry) => entry.trim())) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) return null;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from || to >= count) return null;
    for (let shard = from; shard <= to; shard += 1) shards.add(shard);
  }
  return [...shards].sort((a, b) => a - b);
}

/** DELIVERY_QUEUE_SHARDS (every process of a deployment must agree) and WORKER_QUEUE_SHARDS. */
export function readQueueShards(source: Source, problems: string[], topology: RedisTopology): QueueShards {
  const countText = raw(source, 'DELIVERY_QUEUE_SHARDS');
  let count = defaultQueueShards(topology);
  if (countText !== undefined) {
    if (!/^\d+$/.test(countText) || Number(countText) < 1 || Number(countText) > MAX_QUEUE_SHARDS) {
      problems.push(`DELIVERY_QUEUE_SHARDS must be a whole number from 1 to ${MAX_QUEUE_SHARDS} (got "${countText}")`);
    } else {
      count = Number(countText);
    }
  }
  const all = Array.from({ length: count }, (_, shard) => shard);
  const consumedText = raw(source, 'WORKER_QUEUE_SHARDS');
  if (consumedText === undefined) return { count, consumed: all };
  const consumed = parseShardList(consumedText, count);
  if (consumed === null) {
    problems.push(
      `WORKER_QUEUE_SHARDS must list shards from 0 to ${count - 1} such as 0-3,6 (got "${consumedText}"; DELIVERY_QUEUE_SHARDS is ${count})`,
    );
    return { count, consumed: all };
  }
  return { count, consumed };
}
