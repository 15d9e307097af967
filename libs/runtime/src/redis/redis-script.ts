import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection';

/**
 * A Lua script sent by its SHA1 (EVALSHA: a few dozen bytes instead of the script's text on every
 * call), falling back to EVAL when the server does not know it yet (first use, restart, SCRIPT FLUSH).
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: Pick<RedisClient, 'evalsha' | 'eval'>, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
