import { type AppName, EnvironmentError, loadEnvironment } from './environment';

function problemsOf(source: Record<string, string>, app?: AppName): string[] {
  try {
    loadEnvironment(source, app);
  } catch (error) {
    if (error instanceof EnvironmentError) return error.problems;
    throw error;
  }
  throw new Error('expected the environment to be refused');
}

const PRODUCTION_TOKENS = {
  ADMIN_TOKEN: 'admin-token-0123456789',
  INGEST_TOKEN: 'ingest-token-0123456789',
  SECRETS_KEY: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
};

describe('loadEnvironment', () => {
  it('fills in the documented defaults when nothing is set', () => {
    const environment = loadEnvironment({});
    expect(environment.nodeEnv).toBe('development');
    expect(environment.production).toBe(false);
    expect(environment.database).toEqual({ url: 'postgres://postgres@127.0.0.1:5432/callbacks', poolSize: 10, connectTimeoutMs: 10_000 });
    expect(environment.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'callbacks' });
    expect(environment.ports).toEqual({ configApi: 3000, ingest: 3001, worker: 3002 });
    expect(environment.listenHost).toBeNull();
    expect(environment.auth).toEqual({ adminToken: null, ingestTokens: [] });
    expect(environment.delivery).toEqual({
      allowPrivateTargets: false,
      blockedTargetRanges: [],
      dns: { servers: null, timeoutMs: 5000 },
      timeoutMs: 10_000,
      retryScheduleMs: [10_000, 60_000, 300_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000],
      workerConcurrency: 50,
      endpointConcurrency: 10,
      originConcurrency: 50,
      breakerFailureThreshold: 5,
      breakerCooldownMs: 30_000,
      reconcileIntervalMs: 15_000,
      endpointDisableAfterMs: 5 * 24 * 3_600_000,
      orderingRecheckMs: 5_000,
      requeueMaxWaiting: 10_000,
      requeueMaxRedisMemory: 0.8,
    });
    expect(environment.retention).toEqual({ days: 30 });
    expect(environment.accountDeletion).toEqual({ settleMs: 30_000 });
  });

  it('reads ACCOUNT_DELETION_SETTLE as a duration and refuses what is not one', () => {
    expect(loadEnvironment({ ACCOUNT_DELETION_SETTLE: '2m' }).accountDeletion.settleMs).toBe(120_000);
    expect(problemsOf({ ACCOUNT_DELETION_SETTLE: 'soon' })).toEqual(['ACCOUNT_DELETION_SETTLE must be a duration such as 500ms, 10s, 5m or 1h (got "soon")']);
  });

  it('treats an empty or blank setting as unset', () => {
    expect(loadEnvironment({ RETENTION_DAYS: '', WORKER_CONCURRENCY: '   ' })).toMatchObject({
      retention: { days: 30 },
      delivery: { workerConcurrency: 50 },
    });
  });

  describe('RETENTION_DAYS', () => {
    it.each([
      ['1', 1],
      ['7', 7],
      [' 90 ', 90],
      ['3650', 3650],
    ])('accepts %j', (value, days) => {
      expect(loadEnvironment({ RETENTION_DAYS: value }).retention.days).toBe(days);
    });

    it.each(['0', '3651', '-5', '1.5', '30d', 'forever', '1e3'])('refuses %j, naming the setting and the range', (value) => {
      expect(problemsOf({ RETENTION_DAYS: value })).toEqual([`RETENTION_DAYS must be a whole number from 1 to 3650 (got "${value}")`]);
    });
  });

  it('parses RETRY_SCHEDULE with every unit and refuses a malformed one', () => {
    expect(loadEnvironment({ RETRY_SCHEDULE: '250ms, 2s,1m,1h' }).delivery.retryScheduleMs).toEqual([250, 2_000, 60_000, 3_600_000]);
    for (const value of ['10s,,1m', '10s,1d', '10 seconds', '10s;1m', ',']) {
      const problems = problemsOf({ RETRY_SCHEDULE: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^RETRY_SCHEDULE must be a comma separated list of durations/);
      expect(problems[0]).toContain(`(got "${value.trim()}")`);
    }
  });

  describe('ENDPOINT_DISABLE_AFTER', () => {
    it.each([
      ['5d', 5 * 86_400_000],
      ['36h', 36 * 3_600_000],
      ['90m', 90 * 60_000],
      ['30s', 30_000],
      ['1500ms', 1500],
    ])('accepts %j', (value, ms) => {
      expect(loadEnvironment({ ENDPOINT_DISABLE_AFTER: value }).delivery.endpointDisableAfterMs).toBe(ms);
    });

    it.each(['0d', '0s', '5', '5 days', '1w', '-1d', '1.5d'])('refuses %j, naming the setting and the units', (value) => {
      expect(problemsOf({ ENDPOINT_DISABLE_AFTER: value })).toEqual([
        `ENDPOINT_DISABLE_AFTER must be a positive duration with a unit of ms, s, m, h or d, such as 12h or 5d (got "${value}")`,
      ]);
    });
  });

  it('reads LISTEN_HOST as an address or a host name and refuses anything else', () => {
    for (const host of ['127.0.0.1', '::1', '0.0.0.0', 'callbacks-internal', 'api.internal.example']) {
      expect(loadEnvironment({ LISTEN_HOST: host }).listenHost).toBe(host);
    }
    for (const host of ['http://127.0.0.1', '127.0.0.1:3000', 'a b', '-dash']) {
      expect(problemsOf({ LISTEN_HOST: host })).toEqual([
        `LISTEN_HOST must be an IP address or a host name such as 127.0.0.1 or ::1 (got "${host}")`,
      ]);
    }
  });

  it('reads PUBLIC_URL, defaulting to config-api on loopback, and refuses what cannot prefix a portal link', () => {
    expect(loadEnvironment({ CONFIG_API_PORT: '3100' }).publicUrl).toBe('http://127.0.0.1:3100');
    expect(loadEnvironment({ PUBLIC_URL: 'https://callbacks.example.com/' }).publicUrl).toBe('https://callbacks.example.com');
    expect(loadEnvironment({ PUBLIC_URL: 'https://example.com/callbacks' }).publicUrl).toBe('https://example.com/callbacks');
    expect(problemsOf({ PUBLIC_URL: 'ftp://example.com' })).toEqual(['PUBLIC_URL must be a http: or https: URL (got protocol "ftp:")']);
    expect(problemsOf({ PUBLIC_URL: 'nonsense' })).toEqual(['PUBLIC_URL is not a valid URL']);
    expect(problemsOf({ PUBLIC_URL: 'https://example.com/#x' })).toEqual([
      'PUBLIC_URL must not carry credentials, a query or a fragment (got "https://example.com/#x")',
    ]);
  });

  it('reads ALLOW_PRIVATE_TARGETS explicitly, so "false" is false', () => {
    for (const value of ['false', 'FALSE', '0', 'no']) {
      expect(loadEnvironment({ ALLOW_PRIVATE_TARGETS: value }).delivery.allowPrivateTargets).toBe(false);
    }
    for (const value of ['true', 'True', '1', 'yes']) {
      expect(loadEnvironment({ ALLOW_PRIVATE_TARGETS: value }).delivery.allowPrivateTargets).toBe(true);
    }
    expect(problemsOf({ ALLOW_PRIVATE_TARGETS: 'maybe' })).toEqual(['ALLOW_PRIVATE_TARGETS must be true or false (got "maybe")']);
  });

  it('reads TRUST_PROXY as a hop count or CIDR blocks, and refuses anything else', () => {
    expect(loadEnvironment({}).trustProxy).toBeNull();
    expect(loadEnvironment({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadEnvironment({ TRUST_PROXY: '10.0.0.0/8, fd00::/8' }).trustProxy).toMatchObject({ ranges: [expect.anything(), expect.anything()] });
    expect(problemsOf({ TRUST_PROXY: '0' })).toEqual(['TRUST_PROXY must be a hop count from 1 to 10 or a list of CIDR blocks (got "0")']);
    expect(problemsOf({ TRUST_PROXY: 'true' })[0]).toMatch(/^TRUST_PROXY must be a hop count .*"true" is not an IPv4 or IPv6 CIDR block/);
  });

  it('reads DNS_SERVERS and DNS_TIMEOUT_MS, and names a bad server list', () => {
    expect(loadEnvironment({ DNS_SERVERS: '10.0.0.53, 10.0.0.54:5353,[fd00::53]:53', DNS_TIMEOUT_MS: '800' }).delivery.dns).toEqual({
      servers: ['10.0.0.53', '10.0.0.54:5353', '[fd00::53]:53'],
      timeoutMs: 800,
    });
    expect(problemsOf({ DNS_SERVERS: '10.0.0.53,dns.example.com' })[0]).toMatch(/^DNS_SERVERS must be a comma-separated list of IP addresses/);
    expect(problemsOf({ DNS_TIMEOUT_MS: '0' })[0]).toMatch(/^DNS_TIMEOUT_MS/);
  });

  it('reads BLOCKED_TARGET_RANGES as CIDR blocks, and names a bad one', () => {
    expect(loadEnvironment({}).delivery.blockedTargetRanges).toEqual([]);
    expect(loadEnvironment({ BLOCKED_TARGET_RANGES: '10.96.0.0/12,fd00:10::/64' }).delivery.blockedTargetRanges).toHaveLength(2);
    expect(problemsOf({ BLOCKED_TARGET_RANGES: '10.96.0.0/12,10.0.0.0/40' })[0]).toMatch(/^BLOCKED_TARGET_RANGES must be .*"10.0.0.0\/40"/);
  });

  it('requires in production only the token the app serves with', () => {
    const keyOnly = { NODE_ENV: 'production', SECRETS_KEY: PRODUCTION_TOKENS.SECRETS_KEY };
    expect(problemsOf({ ...keyOnly }, 'config-api')).toEqual(['ADMIN_TOKEN is required when NODE_ENV=production']);
    expect(problemsOf({ ...keyOnly }, 'ingest')).toEqual(['INGEST_TOKEN is required when NODE_ENV=production']);
    expect(loadEnvironment(keyOnly, 'delivery-worker').auth).toEqual({ adminToken: null, ingestTokens: [] });
    expect(problemsOf({ NODE_ENV: 'production' }, 'delivery-worker')).toEqual([expect.stringMatching(/^SECRETS_KEY is required/)]);
  });

  it('requires ADMIN_TOKEN, INGEST_TOKEN and SECRETS_KEY in production only', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'ADMIN_TOKEN is required when NODE_ENV=production',
      'INGEST_TOKEN is required when NODE_ENV=production',
      'SECRETS_KEY is required when NODE_ENV=production (it encrypts signing secrets, bot webhook keys and Open API tokens in PostgreSQL)',
    ]);
    expect(
      problemsOf({ NODE_ENV: 'production', ADMIN_TOKEN: PRODUCTION_TOKENS.ADMIN_TOKEN, INGEST_TOKEN: ' , ', SECRETS_KEY: PRODUCTION_TOKENS.SECRETS_KEY }),
    ).toEqual([
      'INGEST_TOKEN is required when NODE_ENV=production',
    ]);
    const production = loadEnvironment({ NODE_ENV: 'production', ...PRODUCTION_TOKENS, INGEST_TOKEN: 'ingest-token-0123456789, ingest-token-second-one' });
    expect(production.production).toBe(true);
    expect(production.auth).toEqual({
      adminToken: PRODUCTION_TOKENS.ADMIN_TOKEN,
      ingestTokens: ['ingest-token-0123456789', 'ingest-token-second-one'],
    });
    expect(production.secrets.current?.id).toBe('k1');
    expect(loadEnvironment({ NODE_ENV: 'test' }).auth).toEqual({ adminToken: null, ingestTokens: [] });
    expect(loadEnvironment({ NODE_ENV: 'test' }).secrets).toEqual({ current: null, previous: [] });
  });

  it('lists every problem at once instead of stopping at the first', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      INGEST_TOKEN: 'short',
      DATABASE_URL: 'mysql://localhost/callbacks',
      REDIS_URL: 'not a url',
      WORKER_PORT: '70000',
      RETRY_SCHEDULE: 'soon',
      ALLOW_PRIVATE_TARGETS: 'sometimes',
      BREAKER_COOLDOWN: '30',
      RETENTION_DAYS: '0',
      LOG_LEVEL: 'loud',
    });
    const named = ['ADMIN_TOKEN', 'INGEST_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'WORKER_PORT', 'RETRY_SCHEDULE', 'ALLOW_PRIVATE_TARGETS', 'BREAKER_COOLDOWN', 'RETENTION_DAYS', 'LOG_LEVEL', 'SECRETS_KEY'];
    expect(problems).toHaveLength(named.length);
    for (const name of named) expect(problems.some((problem) => problem.startsWith(`${name} `))).toBe(true);
    expect(problems).toContain('INGEST_TOKEN must be at least 16 characters long');

    let thrown: unknown;
    try {
      loadEnvironment({ RETENTION_DAYS: 'x', WORKER_CONCURRENCY: '0' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EnvironmentError);
    expect((thrown as Error).message).toBe(
      'Invalid configuration:\n' +
        '  - WORKER_CONCURRENCY must be a whole number from 1 to 10000 (got "0")\n' +
        '  - RETENTION_DAYS must be a whole number from 1 to 3650 (got "x")',
    );
  });
});
