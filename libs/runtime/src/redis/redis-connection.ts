import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Environment } from '../config/environment';

/** A connection to whichever Redis deployment is configured: a Cluster is a different ioredis class. */
export type RedisClient = Redis | Cluster;

/**
 * command:  fail fast instead of queueing while Redis is away, so callers can answer (or fall back)
 *           at once rather than hang; a command in flight when the connection drops fails too and is
 *           never sent again on reconnect (see failUnanswered);
 * blocking: BullMQ workers and queues that must ride out restarts and failovers (BullMQ requires
 *           maxRetriesPerRequest null);
 * subscriber: pub/sub listeners, which retry forever and resubscribe by themselves.
 */
export type RedisConnectionRole = 'command' | 'blocking' | 'subscriber';

const reconnectDelay = (times: number): number => Math.min(times * 200, 2000);

function roleOptions(role: RedisConnectionRole): RedisOptions {
  if (role === 'command') return { maxRetriesPerRequest: 1, connectTimeout: 3000, autoResendUnfulfilledCommands: false };
  return { maxRetriesPerRequest: null };
}

/**
 * An ioredis client with no 'error' listener prints "Unhandled error event" for every failed
 * (re)connect, or throws. BullMQ duplicates a worker's connection for its blocking reads and removes
 * its own listener when it closes that copy, yet a Cluster copy closed while it still connects (a
 * slow machine) or whose nodes went away refreshes its slots once more and reports
 * ClusterAllFailedError to nobody. Every connection made here, and every copy made of it, keeps a
 * listener; whoever uses a connection still adds their own to report its errors.
 */
function alwaysHeard<Client extends RedisClient>(client: Client): Client {
  client.on('error', () => undefined);
  const duplicate = client.duplicate.bind(client) as (...args: unknown[]) => RedisClient;
  const heardDuplicate = (...args: unknown[]): RedisClient => alwaysHeard(duplicate(...args));
  Object.defineProperty(client, 'duplicate', { value: heardDuplicate, configurable: true, writable: true });
  return client;
}

/** The commands ioredis set aside, sent and unanswered, when a connection dropped (not part of its typings). */
interface SetAside {
  prevCommandQueue?: { shift(): { command: { reject(error: Error): void } } | undefined; length: number } | null;
}

/**
 * ioredis sends the commands a dropped connection left unanswered again once it reconnects, which for
 * a caller that fails fast is a command run later behind its back: ingest's job add, given up after its
 * time-out and left to the reconciler, reached a Redis restarted empty seconds later while a worker
 * still held the job taken before the restart, and the event was called twice. With
 * autoResendUnfulfilledCommands off, ioredis drops them without settling their promises; they are failed
 * here, when it starts reconnecting (it has set them aside by then), so no caller waits forever.
 */
function failUnanswered(client: Redis): void {
  client.on('reconnecting', () => {
    const setAside = client as unknown as SetAside;
    const unanswered = setAside.prevCommandQueue;
    if (!unanswered) return;
    setAside.prevCommandQueue = null;
    const error = new Error('the connection to Redis dropped before it answered; the command is not sent again');
    for (let item = unanswered.shift(); item; item = unanswered.shift()) item.command.reject(error);
  });
}

/**
 * Every Redis connection the service makes comes from here, so each process talks to the one
 * deployment the environment names: REDIS_URL (standalone), REDIS_CLUSTER_NODES (ioredis Cluster,
 * which follows slot moves and failovers) or REDIS_SENTINELS (ioredis asks the sentinels for the
 * current primary on every reconnect).
 */
export function createRedisConnection(
  environment: Pick<Environment, 'redis' | 'redisTopology'>,
  role: RedisConnectionRole,
  connectionName?: string,
  tuning: Pick<RedisOptions, 'commandTimeout'> = {},
): RedisClient {
  const options: RedisOptions = { ...roleOptions(role), ...tuning, ...(connectionName ? { connectionName } : {}) };
  const offlineQueue = role !== 'command';
  const topology = environment.redisTopology;
  if (topology.kind === 'cluster') {
    return alwaysHeard(
      new Cluster(topology.nodes, {
        redisOptions: { ...options, ...topology.auth },
        enableOfflineQueue: offlineQueue,
        clusterRetryStrategy: reconnectDelay,
        slotsRefreshTimeout: 2000,
      }),
    );
  }
  const standalone = (client: Redis): Redis => {
    if (role === 'command') failUnanswered(client);
    return alwaysHeard(client);
  };
  if (topology.kind === 'sentinel') {
    return standalone(
      new Redis({
        ...options,
        ...topology.auth,
        ...(topology.sentinelPassword === undefined ? {} : { sentinelPassword: topology.sentinelPassword }),
        sentinels: topology.sentinels,
        name: topology.name,
        role: 'master',
        // Not ioredis's failover detector: its disconnect can land while a reconnect is asking the
        // sentinels, which ends the connection for good (seen in the failover drill). A dead primary
        // drops the connection anyway, and a demoted one answers READONLY, which reconnects below.
        reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
        enableOfflineQueue: offlineQueue,
        retryStrategy: reconnectDelay,
        // Never give up on the sentinels: the deployment is expected to come back.
        sentinelRetryStrategy: reconnectDelay,
      }),
    );
  }
  return standalone(new Redis(environment.redis.url, { ...options, enableOfflineQueue: offlineQueue, retryStrategy: reconnectDelay }));
}

/** Waits until a connection is ready or the time runs out; start-up continues either way and readiness reports the truth. */
export async function waitForReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}

/**
 * quit() on a connection that already ended never settles its handle; there is nothing to close then.
 * On a connection that is not up, QUIT would wait in the offline queue until Redis returns (holding up
 * a shutdown for as long as Redis is away): drop it instead.
 */
export async function closeRedisConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().then(
    () => undefined,
    () => client.disconnect(),
  );
}
