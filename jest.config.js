/** @type {import('jest').Config} */
const aliases = {
  '^@app/(payloads|signing|persistence|runtime|testing)$': '<rootDir>/libs/$1/src',
  '^@app/(payloads|signing|persistence|runtime|testing)/(.*)$': '<rootDir>/libs/$1/src/$2',
  // The TypeScript client is an ES module package: its relative imports name the built .js file.
  '^(\\.{1,2}/.*)\\.js$': '$1',
};
// Type checking is `npm run typecheck`'s job; tests transpile only, which keeps the suite fast.
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }],
  // openid-client and its two dependencies are ES modules only: Jest's CommonJS loader needs them transpiled.
  '^.+/node_modules/(openid-client|oauth4webapi|jose)/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true, module: 'commonjs', target: 'ES2022' } }],
};
const transformIgnorePatterns = ['/node_modules/(?!(openid-client|oauth4webapi|jose)/)'];
const ALONE = ['/test/ordering/delivery-pace-schedule'];
const compiled = { rootDir: __dirname, testEnvironment: 'node', transform, transformIgnorePatterns, moduleNameMapper: aliases };
/** The end-to-end projects: the run's database and Redis prefix, and each test file in its worker's copy of them. */
const endToEnd = {
  ...compiled,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['reflect-metadata', '<rootDir>/test/support/use-worker-namespace.ts'],
};

module.exports = {
  // Per-project testTimeout is ignored by Jest; e2e tests wait on real services, so the bound is global.
  testTimeout: 60000,
  // On two cores Jest runs every file inside its own main process (one worker means in band), and the suites' leftovers
  // (Nest apps, undici pools, ts-jest caches) grew that one heap past its 4 GB limit in CI (exit 134 after
  // 26 minutes). A limit makes Jest use a worker and start a fresh one once a file leaves it above 1.5 GB.
  workerIdleMemoryLimit: '1.5GB',
  // Much of the e2e time is spent waiting on real services (retries, timeouts, receivers), so on two cores three
  // workers finish far sooner than one; more starve the browser suites' deadlines. Each worker has a database
  // and Redis prefix of its own (test/support/worker-databases.ts). JEST_WORKERS=1 runs the files one after another.
  maxWorkers: Number(process.env.JEST_WORKERS ?? 3),
  projects: [
    {
      displayName: 'unit',
      ...compiled,
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts', '<rootDir>/examples/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts', '<rootDir>/clients/**/*.spec.ts'],
    },
    { displayName: 'e2e', ...endToEnd, testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'], testPathIgnorePatterns: ALONE },
    {
      // Suites that hold a rate against the wall clock: `npm test` (scripts/run-tests.mjs) runs them after the
      // others, in one worker, so no other file takes their CPU.
      displayName: 'e2e-alone',
      ...endToEnd,
      testMatch: ALONE.map((path) => `<rootDir>${path}.e2e-spec.ts`),
    },
    {
      // The delivery suites again, against a real three-master Redis Cluster the setup starts on loopback.
      displayName: 'e2e-cluster',
      ...compiled,
      testMatch: ['<rootDir>/test/delivery/delivery.e2e-spec.ts', '<rootDir>/test/tenancy/delivery-isolation.e2e-spec.ts', '<rootDir>/test/resilience/delivery-crash.e2e-spec.ts', '<rootDir>/test/tenancy/endpoint-tenants.e2e-spec.ts', '<rootDir>/test/ordering/delivery-ordering.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/cluster-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/cluster-global-teardown.ts',
      setupFiles: ['reflect-metadata', '<rootDir>/test/support/use-redis-cluster.ts'],
    },
  ],
};
