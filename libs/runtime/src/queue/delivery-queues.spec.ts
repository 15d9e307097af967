import { RedisKeys } from '../redis/redis-keys';
import { shardOfAccount } from './delivery-queues';

describe('shardOfAccount', () => {
  it('keeps an account on one shard and spreads consecutive accounts evenly', () => {
    const counts = new Array<number>(8).fill(0);
    for (let accountId = 1; accountId <= 800; accountId += 1) counts[shardOfAccount(accountId, 8)] += 1;
    expect(counts).toEqual(new Array<number>(8).fill(100));
    expect(shardOfAccount(12345, 8)).toBe(shardOfAccount(12345, 8));
  });

  it('stays within range for any id and a single shard', () => {
    expect(shardOfAccount(-3, 8)).toBe(5);
    expect(shardOfAccount(7, 1)).toBe(0);
  });
});

describe('hash tags', () => {
  // The text between the first { and the next } decides a Redis Cluster slot.
  const tagOf = (key: string): string => /\{([^}]*)\}/.exec(key)?.[1] ?? key;

  it('puts an endpoint breaker hash and lease set under one tag, distinct per endpoint', () => {
    const keys = new RedisKeys('callbacks');
    expect(tagOf(keys.breaker('https://a.example'))).toBe(tagOf(keys.leases('https://a.example')));
    expect(tagOf(keys.breaker('https://a.example'))).not.toBe(tagOf(keys.breaker('https://b.example')));
  });

  it('gives every queue shard a tag of its own', () => {
    const keys = new RedisKeys('callbacks');
    const tags = Array.from({ length: 8 }, (_, shard) => tagOf(`${keys.deliveryQueuePrefix(shard)}:deliveries:wait`));
    expect(new Set(tags).size).toBe(8);
  });
});
