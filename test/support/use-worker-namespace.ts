import { currentWorkerId, workerDatabaseUrl, workerRedisPrefix } from './worker-databases';

/**
 * Setup file of the e2e project: this test file talks to its Jest worker's database and Redis prefix
 * (made by global-setup.ts). Jest gives every test file its own process.env, so the change stays here.
 */
const runDatabaseUrl = process.env.TEST_RUN_DATABASE_URL;
const runPrefix = process.env.TEST_RUN_REDIS_PREFIX;
if (!runDatabaseUrl || !runPrefix) throw new Error('the e2e project needs its global setup (test/support/global-setup.ts)');
process.env.DATABASE_URL = workerDatabaseUrl(runDatabaseUrl, currentWorkerId());
process.env.REDIS_PREFIX = workerRedisPrefix(runPrefix, currentWorkerId());
