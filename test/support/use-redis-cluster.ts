import { currentWorkerId, workerDatabaseUrl, workerRedisPrefix } from './worker-databases';

/**
 * Setup file of the e2e-cluster project: this test file talks to the run's Redis Cluster and its Jest
 * worker's copy of the cluster project's database, under its worker's Redis prefix. Jest gives every test
 * file its own process.env, so this stays here.
 */
const nodes = process.env.TEST_REDIS_CLUSTER_NODES;
const databaseUrl = process.env.TEST_CLUSTER_DATABASE_URL;
const runPrefix = process.env.TEST_RUN_REDIS_PREFIX;
if (!nodes || !databaseUrl || !runPrefix) throw new Error('the e2e-cluster project needs its global setup (test/support/cluster-global-setup.ts)');
process.env.REDIS_CLUSTER_NODES = nodes;
process.env.DATABASE_URL = workerDatabaseUrl(databaseUrl, currentWorkerId());
process.env.REDIS_PREFIX = workerRedisPrefix(runPrefix, currentWorkerId());
