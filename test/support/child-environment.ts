/**
 * The settings an app started as a child process gets in the tests: the run's database, Redis deployment
 * (standalone, cluster or sentinels) and prefix, tokens, random ports and loopback receivers allowed;
 * `env` adds or overrides.
 */
export function childEnvironment(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? '',
    REDIS_SENTINELS: process.env.REDIS_SENTINELS ?? '',
    REDIS_SENTINEL_NAME: process.env.REDIS_SENTINEL_NAME ?? '',
    REDIS_PREFIX: process.env.REDIS_PREFIX ?? '',
    ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? '',
    INGEST_TOKEN: process.env.INGEST_TOKEN ?? '',
    SECRETS_KEY: process.env.SECRETS_KEY ?? '',
    ACCOUNT_DELETION_SETTLE: process.env.ACCOUNT_DELETION_SETTLE ?? '',
    CONFIG_API_PORT: '0',
    INGEST_PORT: '0',
    WORKER_PORT: '0',
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
    ...env,
  };
}
