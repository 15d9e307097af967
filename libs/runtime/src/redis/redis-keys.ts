/** Every Redis key this service writes, under one configurable prefix so deployments and test runs never collide. */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  nonce(accountId: number, nonce: string): string {
    return `${this.prefix}:nonce:${accountId}:${nonce}`;
  }

  rateLimitPrefix(): string {
    return `${this.prefix}:ratelimit`;
  }

  settingsChannel(): string {
    return `${this.prefix}:settings-changed`;
  }

  /**
   * One endpoint's breaker hash and lease set, and its origin's shared lease set and waiting list, are
   * read and written together by one script, so on a Redis Cluster they must share a slot: the origin
   * is the hash tag (endpointOrigin), and the rest of the endpoint key comes after the kind.
   */
  endpoint(kind: string, endpointKey: string): string {
    const origin = endpointOrigin(endpointKey);
    const rest = endpointKey.slice(origin.length);
    return `${this.prefix}:endpoint:{${origin}}:${kind}${rest}`;
  }

  /** Keys of one origin (scheme, host, port) shared by every account's endpoint there: same slot as those endpoints. */
  origin(kind: string, origin: string): string {
    return `${this.prefix}:endpoint:{${origin}}:origin-${kind}`;
  }

  /**
   * BullMQ prefix of one delivery queue shard. BullMQ's scripts touch many keys of a queue at once, so
   * its documentation asks for a hash-tagged prefix on a cluster; one tag per shard lets the cluster
   * place the shards on different nodes.
   */
  deliveryQueuePrefix(shard: number): string {
    return `${this.prefix}:{dq${shard}}`;
  }

  /** A value made once per Redis lifetime: gone when Redis loses its contents (see DeliveryQueues.contentsMark); read alone. */
  contentsMark(): string {
    return `${this.prefix}:contents-mark`;
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
}

/**
 * An endpoint key is `<origin>|<account id>|<digest of the URL>` (endpointKeyOf in endpoint-keys); a
 * key without `|` (used by tests of the scripts) is an origin of its own. `|` cannot occur in an origin.
 */
export function endpointOrigin(endpointKey: string): string {
  const bar = endpointKey.indexOf('|');
  return bar < 0 ? endpointKey : endpointKey.slice(0, bar);
}
