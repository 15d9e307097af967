import { endpointOrigin, RedisKeys } from './redis-keys';

/**
 * Running deployments hold these keys and rolling upgrades mix old and new processes, so each string is
 * pinned here as written: a change to one is a migration, not a refactoring.
 */
describe('RedisKeys', () => {
  const keys = new RedisKeys('callbacks');
  const endpoint = 'https://hooks.example:8443|42|AbCdEfGh12345678';

  it('builds its prefix from REDIS_PREFIX', () => {
    expect(RedisKeys.of({ redis: { url: 'redis://127.0.0.1:6379', prefix: 'tenant-a' } }).settingsChannel()).toBe('tenant-a:settings-changed');
  });

  it('keeps the keys of the Open API, the portal and the settings channel', () => {
    expect(keys.nonce(7, 'n0nce')).toBe('callbacks:nonce:7:n0nce');
    expect(keys.rateLimitPrefix()).toBe('callbacks:ratelimit');
    expect(keys.authFailuresLimit()).toBe('callbacks:ratelimit:auth-failures');
    expect(keys.testEventsLimit()).toBe('callbacks:ratelimit:test-events');
    expect(keys.portalCallsLimit()).toBe('callbacks:ratelimit:portal-calls');
    expect(keys.portalAccountCallsLimit()).toBe('callbacks:ratelimit:portal-account-calls');
    expect(keys.portalBulkLimit()).toBe('callbacks:ratelimit:portal-bulk');
    expect(keys.settingsChannel()).toBe('callbacks:settings-changed');
    expect(keys.botWebhooksStamp(7)).toBe('callbacks:bot-webhooks:7:stamp');
  });

  it('keeps the endpoint keys under the origin as hash tag, the account and digest after the kind', () => {
    expect(keys.breaker(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:breaker|42|AbCdEfGh12345678');
    expect(keys.pace(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:pace|42|AbCdEfGh12345678');
    expect(keys.pacePlaces(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:places|42|AbCdEfGh12345678');
    expect(keys.leases(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:leases|42|AbCdEfGh12345678');
    expect(keys.wanting(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:wanting|42|AbCdEfGh12345678');
    expect(keys.originLeases(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:origin-leases');
    expect(keys.originWaiting(endpoint)).toBe('callbacks:endpoint:{https://hooks.example:8443}:origin-waiting');
  });

  it('treats a key without an account as an origin of its own', () => {
    expect(endpointOrigin('https://a.example')).toBe('https://a.example');
    expect(keys.breaker('https://a.example')).toBe('callbacks:endpoint:{https://a.example}:breaker');
    expect(keys.originLeases('https://a.example')).toBe('callbacks:endpoint:{https://a.example}:origin-leases');
  });

  it('keeps the queue, backlog, ordering and index keys', () => {
    expect(keys.deliveryQueuePrefix(3)).toBe('callbacks:{dq3}');
    expect(keys.taskQueuePrefix()).toBe('callbacks:{tasks}');
    expect(keys.contentsMark()).toBe('callbacks:contents-mark');
    expect(keys.openEndpoints()).toBe('callbacks:endpoints:open');
    expect(keys.accountBacklog(7)).toBe('callbacks:backlog:7');
    expect(keys.subjectRelease('12-0-3')).toBe('callbacks:subject-release:12-0-3');
  });
});
