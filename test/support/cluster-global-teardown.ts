import { Client } from 'pg';
import { CLUSTER_HANDLE } from './cluster-global-setup';
import globalTeardown from './global-teardown';
import type { RedisClusterHandle } from './redis-deployments';

export default async function clusterGlobalTeardown(): Promise<void> {
  const cluster = (globalThis as Record<string, unknown>)[CLUSTER_HANDLE] as RedisClusterHandle | undefined;
  try {
    await cluster?.stop();
    const databaseUrl = process.env.TEST_CLUSTER_DATABASE_URL;
    if (databaseUrl && new URL(databaseUrl).pathname.startsWith('/callbacks_test_')) {
      const maintenance = new URL(databaseUrl);
      maintenance.pathname = '/postgres';
      const client = new Client({ connectionString: maintenance.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    }
  } finally {
    await globalTeardown();
  }
}
