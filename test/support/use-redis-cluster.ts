/**
 * Setup file of the e2e-cluster project: this test file talks to the run's Redis Cluster and the
 * cluster project's database. Jest gives every test file its own process.env, so this stays here.
 */
const nodes = process.env.TEST_REDIS_CLUSTER_NODES;
const databaseUrl = process.env.TEST_CLUSTER_DATABASE_URL;
if (!nodes || !databaseUrl) throw new Error('the e2e-cluster project needs its global setup (test/support/cluster-global-setup.ts)');
process.env.REDIS_CLUSTER_NODES = nodes;
process.env.DATABASE_URL = databaseUrl;
