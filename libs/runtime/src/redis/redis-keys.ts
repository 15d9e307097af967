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

  endpoint(kind: string, endpointKey: string): string {
    return `${this.prefix}:endpoint:${kind}:${endpointKey}`;
  }
}
