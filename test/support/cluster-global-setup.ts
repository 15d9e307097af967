import { runMigrations } from '../../libs/persistence/src/migrate';
import globalSetup from './global-setup';
import { copyForWorkers } from './worker-databases';
import { type RedisClusterHandle, startRedisCluster } from './redis-deployments';

/** Where the cluster project's teardown finds the cluster (global setup and teardown share globalThis). */
export const CLUSTER_HANDLE = '__callbacksTestRedisCluster';

/**
 * The e2e-cluster project: the run's usual setup, plus a three-master Redis Cluster on loopback and a
 * database of its own (the delivery suites of both projects run at once, and each has reconcilers
 * that would otherwise claim the other's events). use-redis-cluster.ts points each test file at them.
 */
export default async function clusterGlobalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  await globalSetup(globalConfig);
  const cluster = await startRedisCluster(3);
  (globalThis as Record<string, unknown>)[CLUSTER_HANDLE] = cluster satisfies RedisClusterHandle;
  const databaseUrl = new URL(process.env.DATABASE_URL ?? '');
  databaseUrl.pathname = `${databaseUrl.pathname}_cluster`;
  process.env.TEST_CLUSTER_DATABASE_URL = databaseUrl.toString();
  process.env.TEST_REDIS_CLUSTER_NODES = cluster.setting;
  await runMigrations(databaseUrl.toString());
  await copyForWorkers(databaseUrl.toString(), globalConfig.maxWorkers);
}
