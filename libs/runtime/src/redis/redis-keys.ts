import type { Environment } from '../config/environment';

/**
 * Every Redis key this service writes, under one configurable prefix so deployments and test runs never
 * collide: one method per key family, and the one place that reads REDIS_PREFIX. Nest code injects the
 * instance RedisModule builds; code outside Nest builds one with `RedisKeys.of(environment)`. The strings
 * are what running deployments hold, so redis-keys.spec.ts pins each of them.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  static of(environment: Pick<Environment, 'redis'>): RedisKeys {
    return new RedisKeys(environment.redis.prefix);
  }

  /** Open API request nonce, kept for the replay window. */
  nonce(accountId: number, nonce: string): string {
    return `${this.prefix}:nonce:${accountId}:${nonce}`;
  }

  /** Key prefix of the Open API's per-account call limit (MinuteLimit adds the account). */
  rateLimitPrefix(): string {
    return `${this.prefix}:ratelimit`;
  }

  /** Key prefix of the failed Open API authentications per client address. */
  authFailuresLimit(): string {
    return `${this.rateLimitPrefix()}:auth-failures`;
  }

  /** Key prefix of the test events an account may send a minute. */
  /** Held for 10 minutes after an operational event about a destination (CONTRACT §14: at most one of each action per destination in that time). */
  operationalEvent(accountId: number, destinationId: string, action: string): string {
    return `${this.prefix}:operational:${accountId}:${destinationId}:${action}`;
  }

  testEventsLimit(): string {
    return `${this.rateLimitPrefix()}:test-events`;
  }

  /** Key prefix of the portal's calls per session. */
  portalCallsLimit(): string {
    return `${this.rateLimitPrefix()}:portal-calls`;
  }

  /** Key prefix of the portal's calls per account (every session of it together). */
  portalAccountCallsLimit(): string {
    return `${this.rateLimitPrefix()}:portal-account-calls`;
  }

  /** Key prefix of the portal's bulk redeliveries per account. */
  portalBulkLimit(): string {
    return `${this.rateLimitPrefix()}:portal-bulk`;
  }

  /** A console session made by single sign-on, by the SHA-256 of its cookie (CONTRACT §15); expires with the session. */
  adminSession(digest: string): string {
    return `${this.prefix}:admin-session:${digest}`;
  }

  /** A sign-in under way (state, nonce and PKCE verifier), by the id its browser holds in a cookie; ten minutes at most. */
  adminSignIn(id: string): string {
    return `${this.prefix}:admin-signin:${id}`;
  }

  /** Pub/sub channel telling workers an account's callback settings changed (the account id is the message). */
  settingsChannel(): string {
    return `${this.prefix}:settings-changed`;
  }

  /**
   * Storage: one hash per endpoint (`state`, `failures`, `opened_at`/`retry_at`/`probe_until` in epoch ms,
   * `probe` lease id, `last_error`). Times come from the Redis server clock (TIME), so workers with skewed
   * clocks agree on when a cooldown ends.
   */
  breaker(endpointKey: string): string {
    return this.endpoint('breaker', endpointKey);
  }

  /** The endpoint's pace (the worker's pace schedule writes it; the admin account view reads its rate). */
  pace(endpointKey: string): string {
    return this.endpoint('pace', endpointKey);
  }

  /** The places handed out in the endpoint's pace (job id → its start time). */
  pacePlaces(endpointKey: string): string {
    return this.endpoint('places', endpointKey);
  }

  /** The endpoint's leases in use, scored by their expiry: a lease of a worker that died is reclaimed once it expires. */
  leases(endpointKey: string): string {
    return this.endpoint('leases', endpointKey);
  }

  /**
   * The workers (by id) that were refused a lease of this endpoint lately, scored by when their mark
   * lapses: while others want it, a worker holding its share of the endpoint's leases gets no more.
   */
  wanting(endpointKey: string): string {
    return this.endpoint('wanting', endpointKey);
  }

  /** The leases of the endpoint's origin (every account's calls there). */
  originLeases(endpointKey: string): string {
    return this.origin('leases', endpointOrigin(endpointKey));
  }

  /** The endpoints waiting for room at the endpoint's origin. */
  originWaiting(endpointKey: string): string {
    return this.origin('waiting', endpointOrigin(endpointKey));
  }

  /**
   * BullMQ prefix of one delivery queue shard. BullMQ's scripts touch many keys of a queue at once, so
   * its documentation asks for a hash-tagged prefix on a cluster; one tag per shard lets the cluster
   * place the shards on different nodes.
   */
  deliveryQueuePrefix(shard: number): string {
    return `${this.prefix}:{dq${shard}}`;
  }

  /**
   * BullMQ prefix of the tasks queue (config-api announces a recorded task, the delivery workers take it):
   * one queue, hash-tagged like the delivery shards so a cluster keeps its keys in one slot.
   */
  taskQueuePrefix(): string {
    return `${this.prefix}:{tasks}`;
  }

  /** A value made once per Redis lifetime: gone when Redis loses its contents (see DeliveryQueues.contentsMark); read alone. */
  contentsMark(): string {
    return `${this.prefix}:contents-mark`;
  }

  /** Held by the worker feeding held deliveries back to the queue, so one worker feeds at a time. */
  feederLock(): string {
    return `${this.prefix}:deliveries:feeder`;
  }

  /** Set of endpoints (origins) whose breaker the workers saw open: an index for operators, checked against each breaker hash. */
  openEndpoints(): string {
    return `${this.prefix}:endpoints:open`;
  }

  /** How many delivery jobs of an account are queued (its rank counter, see DeliveryQueues); read and written alone. */
  accountBacklog(accountId: number): string {
    return `${this.prefix}:backlog:${accountId}`;
  }

  /** One key per account, read alone: no hash tag needed on a cluster. */
  botWebhooksStamp(accountId: number): string {
    return `${this.prefix}:bot-webhooks:${accountId}:stamp`;
  }

  /** Exists while an erasure runs and a while after (erasure-stamp.ts); read alone. */
  erasureStamp(): string {
    return `${this.prefix}:erasure-stamp`;
  }

  /** Mark of a delivery job of ordering "subject"": held in the delayed set, or released by the end of the event ahead; read alone. */
  subjectRelease(jobId: string): string {
    return `${this.prefix}:subject-release:${jobId}`;
  }

  /**
   * One endpoint's breaker hash and lease set, and its origin's shared lease set and waiting list, are
   * read and written together by one script, so on a Redis Cluster they must share a slot: the origin
   * is the hash tag (endpointOrigin), and the rest of the endpoint key comes after the kind.
   */
  private endpoint(kind: string, endpointKey: string): string {
    const origin = endpointOrigin(endpointKey);
    const rest = endpointKey.slice(origin.length);
    return `${this.prefix}:endpoint:{${origin}}:${kind}${rest}`;
  }

  /** Keys of one origin (scheme, host, port) shared by every account's endpoint there: same slot as those endpoints. */
  private origin(kind: string, origin: string): string {
    return `${this.prefix}:endpoint:{${origin}}:origin-${kind}`;
  }
}

/**
 * An endpoint key is `<origin>|<account id>|<digest of the URL>` (endpointKeyOf in endpoint-keys); a
 * key without `|` (used by tests of the scripts) is an origin of its own. `|` cannot occur in an origin.
 */
export function endpointOrigin(endpointKey: string): string {
  const bar = endpointKey.indexOf('|');
  return bar < 0 ? endpointKey : endpointKey.slice(0, bar);
}
