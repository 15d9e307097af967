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
   * One endpoint's breaker hash and lease set are read and written together by one script, so on a
   * Redis Cluster they must share a slot: the endpoint is the hash tag, and the kind comes after it,
   * so both keys hash the same text even if an origin held a brace.
   */
  endpoint(kind: string, endpointKey: string): string {
    return `${this.prefix}:endpoint:{${endpointKey}}:${kind}`;
  }

  /**
   * BullMQ prefix of one delivery queue shard. BullMQ's scripts touch many keys of a queue at once, so
   * its documentation asks for a hash-tagged prefix on a cluster; one tag per shard lets the cluster
   * place the shards on different nodes.
   */
  deliveryQueuePrefix(shard: number): string {
    return `${this.prefix}:{dq${shard}}`;
  }

  /** Set of endpoints (origins) whose breaker the workers saw open: an index for operators, checked against each breaker hash. */
  openEndpoints(): string {
    return `${this.prefix}:endpoints:open`;
  }

  /** One key per account, read alone: no hash tag needed on a cluster. */
  botWebhooksStamp(accountId: number): string {
    return `${this.prefix}:bot-webhooks:${accountId}:stamp`;
  }
}
