import * as ipaddr from 'ipaddr.js';
import { parseDuration, parseRetrySchedule } from './duration';
import { readTracingSettings, type TracingSettings } from '../tracing/tracing-settings';
import { readSecretsKeys, type SecretsKeys } from '../secrets/secrets-keys';
import type { AddressRange } from '../net/address-ranges';
import { readBlockedTargetRanges, readTrustProxy, type TrustProxy } from './network-settings';
import { type IdentitySettings, readAdminTokens, readAuditRetentionDays, readOidcSettings } from './identity-settings';
import { DEFAULT_DNS_TIMEOUT_MS, dnsServersProblem, type DnsSettings } from '../net/dns-resolution';
import { checkRedisPrefix, type QueueShards, readQueueShards, readRedisTopology, type RedisTopology } from './redis-topology';

export interface Environment {
  nodeEnv: string;
  production: boolean;
  logLevel: string;
  database: { url: string; poolSize: number; connectTimeoutMs: number };
  redis: { url: string; prefix: string };
  /** Standalone (REDIS_URL), a Redis Cluster or Sentinel; every Redis connection follows it. */
  redisTopology: RedisTopology;
  /** DELIVERY_QUEUE_SHARDS and WORKER_QUEUE_SHARDS. */
  queueShards: QueueShards;
  ports: { configApi: number; ingest: number; worker: number };
  /** PUBLIC_URL without a trailing slash: where users reach config-api; portal links are built on it. */
  publicUrl: string;
  /** The address the HTTP server binds; null: every interface (Node's default, what containers need). */
  listenHost: string | null;
  /** METRICS_PORT: `/metrics` served on this port alone (0: any free one); null: on the app's own port. */
  metricsPort: number | null;
  auth: {
    /** null: the admin API refuses every request (only allowed outside production). */
    adminToken: string | null;
    ingestTokens: string[];
  };
  /** ADMIN_TOKENS, OIDC_* and AUDIT_RETENTION_DAYS: operators' named tokens, single sign-on, the audit log (CONTRACT §15). */
  identity: IdentitySettings;
  openApi: { rateLimitPerMinute: number; timestampSkewSeconds: number; nonceTtlSeconds: number };
  /** TRUST_PROXY: whose `X-Forwarded-For` names the client (null: the socket's address is the client's). */
  trustProxy: TrustProxy | null;
  delivery: {
    allowPrivateTargets: boolean;
    /** BLOCKED_TARGET_RANGES: refused as callback and bot webhook targets like the non-public ranges. */
    blockedTargetRanges: AddressRange[];
    /** DNS_SERVERS and DNS_TIMEOUT_MS: who resolves target names, and for how long at most. */
    dns: DnsSettings;
    timeoutMs: number;
    retryScheduleMs: number[];
    workerConcurrency: number;
    endpointConcurrency: number;
    /** ORIGIN_CONCURRENCY: calls in flight to one origin across all accounts and workers. */
    originConcurrency: number;
    breakerFailureThreshold: number;
    breakerCooldownMs: number;
    reconcileIntervalMs: number;
    /** An endpoint whose attempts have all failed for this long is disabled (CONTRACT §5). */
    endpointDisableAfterMs: number;
    /** ORDERING_RECHECK: how long an event held by ordering "subject" waits before looking again, unless the event ahead releases it first. */
    orderingRecheckMs: number;
    /**
     * Re-queuing held deliveries (a resume, a breaker that closed, a bulk redelivery) keeps at most this
     * many of an account's jobs in the queue (REQUEUE_MAX_WAITING, CONTRACT §10) and stops while Redis is
     * fuller than this share of its maxmemory (REQUEUE_MAX_REDIS_MEMORY).
     */
    requeueMaxWaiting: number;
    requeueMaxRedisMemory: number;
  };
  /** Final events (with their attempts) and bot calls older than this many days are deleted by the worker. */
  retention: { days: number };
  /**
   * ACCOUNT_DELETION_SETTLE: how long after an account was marked deleted its row may go. Events carry no
   * foreign key to it, so this must outlast an ingest statement that saw the account live (15 s bound).
   */
  accountDeletion: { settleMs: number };
  /** OpenTelemetry: OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, CALLBACK_TRACEPARENT. */
  tracing: TracingSettings;
  /** SECRETS_KEY and SECRETS_PREVIOUS_KEYS: what SecretBox seals and opens stored secrets with. */
  secrets: SecretsKeys;
}

export class EnvironmentError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'EnvironmentError';
  }
}

type Source = Record<string, string | undefined>;

/** Collects every problem instead of stopping at the first, so one start shows the whole list. */
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly source: Source) {}

  private raw(name: string): string | undefined {
    const value = this.source[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | null {
    return this.raw(name) ?? null;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  /** Explicit: implicit conversion would read "false" as true. */
  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const lowered = value.toLowerCase();
    if (['true', '1', 'yes'].includes(lowered)) return true;
    if (['false', '0', 'no'].includes(lowered)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  url(name: string, fallback: string, protocols: string[]): string {
    const value = this.string(name, fallback);
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name} must be a ${protocols.join(' or ')} URL (got protocol "${parsed.protocol}")`);
      }
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return value;
  }

  duration(name: string, fallback: string): number {
    const value = this.string(name, fallback);
    const parsed = parseDuration(value);
    if (parsed === null) {
      this.problems.push(`${name} must be a duration such as 500ms, 10s, 5m or 1h (got "${value}")`);
      return parseDuration(fallback) ?? 0;
    }
    return parsed;
  }

  /** A positive duration that may also be written in days (`5d`). */
  longDuration(name: string, fallback: string): number {
    const value = this.string(name, fallback);
    const parsed = parseDuration(value, { days: true });
    if (parsed === null || parsed <= 0) {
      this.problems.push(`${name} must be a positive duration with a unit of ms, s, m, h or d, such as 12h or 5d (got "${value}")`);
      return parseDuration(fallback, { days: true }) ?? 0;
    }
    return parsed;
  }

  require(name: string, present: boolean, why: string): void {
    if (!present) this.problems.push(`${name} is required ${why}`);
  }
}

/** DNS_SERVERS (comma-separated, unset: the system's resolver) and DNS_TIMEOUT_MS. */
function readDns(source: Source, read: Reader): DnsSettings {
  const timeoutMs = read.integer('DNS_TIMEOUT_MS', DEFAULT_DNS_TIMEOUT_MS, 10, 60_000);
  const servers = (source.DNS_SERVERS ?? '')
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  if (servers.length === 0) return { servers: null, timeoutMs };
  const problem = dnsServersProblem(servers);
  if (problem) read.problems.push(`DNS_SERVERS ${problem}`);
  return { servers: problem ? null : servers, timeoutMs };
}

function readDatabase(read: Reader): Environment['database'] {
  return {
    url: read.url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/callbacks', ['postgres:', 'postgresql:']),
    poolSize: read.integer('DATABASE_POOL_SIZE', 10, 1, 500),
    connectTimeoutMs: read.integer('DATABASE_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
  };
}

/** Only the database settings: what `npm run migrate` needs, so a migrate job needs no API tokens. */
export function loadDatabaseSettings(source: Source = process.env): Environment['database'] {
  const read = new Reader(source);
  const database = readDatabase(read);
  if (read.problems.length > 0) throw new EnvironmentError(read.problems);
  return database;
}

export const DEFAULT_RETRY_SCHEDULE = '10s,1m,5m,30m,1h,3h,6h,12h';

/** PUBLIC_URL: an http(s) origin, optionally with a path prefix (a proxy's), but no query or fragment. */
function readPublicUrl(read: Reader, configApiPort: number): string {
  const value = read.url('PUBLIC_URL', `http://127.0.0.1:${configApiPort}`, ['http:', 'https:']);
  try {
    const parsed = new URL(value);
    if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      read.problems.push(`PUBLIC_URL must not carry credentials, a query or a fragment (got "${value}")`);
    }
  } catch {
    // read.url reported it.
  }
  return value.replace(/\/+$/, '');
}

/** LISTEN_HOST: an IPv4 or IPv6 address, or a host name; unset binds every interface. */
function readListenHost(read: Reader): string | null {
  const value = read.optionalString('LISTEN_HOST');
  if (value === null) return null;
  if (ipaddr.isValid(value) || /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/.test(value)) return value;
  read.problems.push(`LISTEN_HOST must be an IP address or a host name such as 127.0.0.1 or ::1 (got "${value}")`);
  return null;
}

/**
 * The bearer tokens each app serves with, so each is required only where it is used: a worker runs
 * without ADMIN_TOKEN or INGEST_TOKEN, and a deployment can give each app only its own secrets.
 */
export const TOKENS_OF_APP = {
  'config-api': ['ADMIN_TOKEN'],
  ingest: ['INGEST_TOKEN'],
  'delivery-worker': [],
} as const satisfies Record<string, readonly ('ADMIN_TOKEN' | 'INGEST_TOKEN')[]>;

export type AppName = keyof typeof TOKENS_OF_APP;

export function isAppName(name: string): name is AppName {
  return Object.hasOwn(TOKENS_OF_APP, name);
}

/**
 * Reads and validates every setting once; throws EnvironmentError naming each bad one. In production
 * `app` narrows the required tokens to its own; without it (tools, tests) both are required.
 */
export function loadEnvironment(source: Source = process.env, app?: AppName): Environment {
  const read = new Reader(source);
  const nodeEnv = read.string('NODE_ENV', 'development');
  const production = nodeEnv === 'production';
  const requiredTokens: readonly string[] = app ? TOKENS_OF_APP[app] : ['ADMIN_TOKEN', 'INGEST_TOKEN'];

  const adminToken = read.optionalString('ADMIN_TOKEN');
  const ingestTokens = (read.optionalString('INGEST_TOKEN') ?? '')
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token.length > 0);
  if (production && requiredTokens.includes('ADMIN_TOKEN')) read.require('ADMIN_TOKEN', adminToken !== null, 'when NODE_ENV=production');
  if (production && requiredTokens.includes('INGEST_TOKEN')) read.require('INGEST_TOKEN', ingestTokens.length > 0, 'when NODE_ENV=production');
  for (const [name, tokens] of [['ADMIN_TOKEN', adminToken ? [adminToken] : []], ['INGEST_TOKEN', ingestTokens]] as const) {
    if (tokens.some((token) => token.length < 16)) read.problems.push(`${name} must be at least 16 characters long`);
  }

  const retryText = read.string('RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE);
  let retryScheduleMs = parseRetrySchedule(retryText);
  if (retryScheduleMs === null) {
    read.problems.push(`RETRY_SCHEDULE must be a comma separated list of durations such as 10s,1m,5m (got "${retryText}")`);
    retryScheduleMs = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE) ?? [];
  }

  const redisTopology = readRedisTopology(source, read.problems);
  const environment: Environment = {
    nodeEnv,
    production,
    logLevel: read.string('LOG_LEVEL', 'info'),
    database: readDatabase(read),
    redis: {
      url: read.url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
      prefix: read.string('REDIS_PREFIX', 'callbacks'),
    },
    ports: {
      configApi: read.integer('CONFIG_API_PORT', 3000, 0, 65535),
      ingest: read.integer('INGEST_PORT', 3001, 0, 65535),
      worker: read.integer('WORKER_PORT', 3002, 0, 65535),
    },
    listenHost: readListenHost(read),
    metricsPort: source.METRICS_PORT?.trim() ? read.integer('METRICS_PORT', 0, 0, 65535) : null,
    publicUrl: '',
    auth: { adminToken, ingestTokens },
    identity: {
      adminTokens: readAdminTokens(source, read.problems),
      oidc: readOidcSettings(source, read.problems),
      auditRetentionDays: readAuditRetentionDays(source, read.problems),
    },
    openApi: {
      rateLimitPerMinute: read.integer('OPEN_API_RATE_LIMIT', 60, 1, 1_000_000),
      timestampSkewSeconds: 300,
      nonceTtlSeconds: 900,
    },
    trustProxy: readTrustProxy(source, read.problems),
    delivery: {
      allowPrivateTargets: read.boolean('ALLOW_PRIVATE_TARGETS', false),
      blockedTargetRanges: readBlockedTargetRanges(source, read.problems),
      dns: readDns(source, read),
      timeoutMs: read.integer('DELIVERY_TIMEOUT_MS', 10_000, 100, 300_000),
      retryScheduleMs,
      workerConcurrency: read.integer('WORKER_CONCURRENCY', 50, 1, 10_000),
      endpointConcurrency: read.integer('ENDPOINT_CONCURRENCY', 10, 1, 10_000),
      originConcurrency: read.integer('ORIGIN_CONCURRENCY', 50, 1, 100_000),
      breakerFailureThreshold: read.integer('BREAKER_FAILURE_THRESHOLD', 5, 1, 10_000),
      breakerCooldownMs: read.duration('BREAKER_COOLDOWN', '30s'),
      reconcileIntervalMs: read.duration('RECONCILE_INTERVAL', '15s'),
      endpointDisableAfterMs: read.longDuration('ENDPOINT_DISABLE_AFTER', '5d'),
      orderingRecheckMs: read.duration('ORDERING_RECHECK', '5s'),
      requeueMaxWaiting: read.integer('REQUEUE_MAX_WAITING', 10_000, 1, 10_000_000),
      requeueMaxRedisMemory: read.integer('REQUEUE_MAX_REDIS_MEMORY_PERCENT', 80, 1, 100) / 100,
    },
    retention: { days: read.integer('RETENTION_DAYS', 30, 1, 3650) },
    accountDeletion: { settleMs: read.duration('ACCOUNT_DELETION_SETTLE', '30s') },
    redisTopology,
    queueShards: readQueueShards(source, read.problems, redisTopology),
    tracing: readTracingSettings(source, read.problems),
    secrets: readSecretsKeys(source, production, read.problems),
  };
  environment.publicUrl = readPublicUrl(read, environment.ports.configApi);
  checkRedisPrefix(environment.redis.prefix, read.problems);
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(environment.logLevel)) read.problems.push(`LOG_LEVEL must be one of ${levels.join(', ')}`);
  if (read.problems.length > 0) throw new EnvironmentError(read.problems);
  return environment;
}
