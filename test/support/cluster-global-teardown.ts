import { CLUSTER_HANDLE } from './cluster-global-setup';
import globalTeardown from './global-teardown';
import type { RedisClusterHandle } from './redis-deployments';

/** Stops the cluster; the run's teardown drops the cluster project's databases with the run's. */
export default async function clusterGlobalTeardown(): Promise<void> {
  const cluster = (globalThis as Record<string, unknown>)[CLUSTER_HANDLE] as RedisClusterHandle | undefined;
  try {
    await cluster?.stop();
  } finally {
    await globalTeardown();
  }
}
