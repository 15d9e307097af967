import { EnvironmentError, loadEnvironment } from './environment';
import { parseShardList } from './redis-topology';

function problemsOf(source: Record<string, string>): string[] {
  try {
    loadEnvironment(source);
  } catch (error) {
    if (error instanceof EnvironmentError) return error.problems;
    throw error;
  }
  throw new Error('expected the environment to be refused');
}

describe('Redis deployment settings', () => {
  it('defaults to standalone Redis and one queue shard', () => {
    const environment = loadEnvironment({});
    expect(environment.redisTopology).toEqual({ kind: 'standalone' });
    expect(environment.queueShards).toEqual({ count: 1, consumed: [0] });
  });

  it('defaults to eight queue shards on a cluster, all consumed, and to one behind sentinels', () => {
    expect(loadEnvironment({ REDIS_CLUSTER_NODES: 'redis-a:7000' }).queueShards).toEqual({ count: 8, consumed: [0, 1, 2, 3, 4, 5, 6, 7] });
    expect(loadEnvironment({ REDIS_SENTINELS: 'sentinel-a:26379' }).queueShards).toEqual({ count: 1, consumed: [0] });
  });

  it('reads REDIS_CLUSTER_NODES', () => {
    expect(loadEnvironment({ REDIS_CLUSTER_NODES: 'redis-a:7000, 10.0.0.2:7001,[::1]:7002' }).redisTopology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'redis-a', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      auth: {},
    });
  });

  it('reads REDIS_SENTINELS with REDIS_SENTINEL_NAME, mymaster by default', () => {
    expect(loadEnvironment({ REDIS_SENTINELS: 's1:26379,s2:26379' }).redisTopology).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      auth: {},
    });
    expect(loadEnvironment({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'callbacks' }).redisTopology).toMatchObject({ name: 'callbacks' });
  });

  it('reads credentials for the cluster nodes, the sentinel-managed primary and the sentinels', () => {
    expect(loadEnvironment({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_USERNAME: 'callbacks', REDIS_PASSWORD: ' s3cret ' }).redisTopology).toMatchObject({
      kind: 'cluster',
      auth: { username: 'callbacks', password: ' s3cret ' },
    });
    expect(loadEnvironment({ REDIS_SENTINELS: 's:26379', REDIS_PASSWORD: 'data', REDIS_SENTINEL_PASSWORD: 'watch' }).redisTopology).toMatchObject({
      kind: 'sentinel',
      auth: { password: 'data' },
      sentinelPassword: 'watch',
    });
  });

  it('refuses credentials settings that would be ignored', () => {
    expect(problemsOf({ REDIS_PASSWORD: 'x' })).toEqual([
      'REDIS_USERNAME and REDIS_PASSWORD apply to REDIS_CLUSTER_NODES or REDIS_SENTINELS; for a standalone Redis put them in REDIS_URL (redis://user:password@host:port)',
    ]);
    expect(problemsOf({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINEL_PASSWORD: 'x' })).toEqual(['REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS']);
  });

  it('refuses a cluster and sentinels at once', () => {
    expect(problemsOf({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 's:26379' })).toEqual([
      'REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: choose one Redis deployment (a cluster or sentinels)',
    ]);
  });

  it.each(['a', 'a:', 'a:0', 'a:65536', 'a:7000,,b', 'a:7000 b:7001', 'http://a:7000'])('refuses REDIS_CLUSTER_NODES=%j', (value) => {
    const [problem] = problemsOf({ REDIS_CLUSTER_NODES: value });
    expect(problem).toMatch(/^REDIS_CLUSTER_NODES must be a comma separated list of host:port/);
  });

  it('refuses a malformed REDIS_SENTINELS', () => {
    expect(problemsOf({ REDIS_SENTINELS: 's1:26379,s2' })).toEqual(['REDIS_SENTINELS must be a comma separated list of host:port (got "s2")']);
  });

  it('refuses a REDIS_PREFIX with braces, which would move the hash tags', () => {
    expect(problemsOf({ REDIS_PREFIX: 'cb{1}' })).toEqual(['REDIS_PREFIX must not contain braces or spaces (got "cb{1}")']);
  });

  it('reads DELIVERY_QUEUE_SHARDS and WORKER_QUEUE_SHARDS', () => {
    expect(loadEnvironment({ DELIVERY_QUEUE_SHARDS: '12', WORKER_QUEUE_SHARDS: '0-3,6, 11' }).queueShards).toEqual({
      count: 12,
      consumed: [0, 1, 2, 3, 6, 11],
    });
    expect(loadEnvironment({ DELIVERY_QUEUE_SHARDS: '1' }).queueShards).toEqual({ count: 1, consumed: [0] });
  });

  it.each(['0', '257', 'eight', '-1'])('refuses DELIVERY_QUEUE_SHARDS=%j', (value) => {
    expect(problemsOf({ DELIVERY_QUEUE_SHARDS: value })).toEqual([`DELIVERY_QUEUE_SHARDS must be a whole number from 1 to 256 (got "${value}")`]);
  });

  it.each(['8', '0-8', '3-1', 'a', '1,,2', '-1'])('refuses WORKER_QUEUE_SHARDS=%j beyond or outside 0..7', (value) => {
    expect(problemsOf({ DELIVERY_QUEUE_SHARDS: '8', WORKER_QUEUE_SHARDS: value })).toEqual([
      `WORKER_QUEUE_SHARDS must list shards from 0 to 7 such as 0-3,6 (got "${value}"; DELIVERY_QUEUE_SHARDS is 8)`,
    ]);
  });

  it('parses shard lists without duplicates, in order', () => {
    expect(parseShardList('5,0-2,1', 8)).toEqual([0, 1, 2, 5]);
  });
});
