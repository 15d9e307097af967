import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection';

/** One call of a script: its keys and arguments. */
export interface ScriptCall {
  keys: string[];
  args: (string | number)[];
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

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
      if (!isNoScript(error)) throw error;
      return this.byText(redis, { keys, args });
    }
  }

  /** The script sent whole (EVAL), for a server that answered NOSCRIPT; EVAL also loads it for the next EVALSHA. */
  private byText(redis: Pick<RedisClient, 'eval'>, { keys, args }: ScriptCall): Promise<unknown> {
    return redis.eval(this.lua, keys.length, ...keys, ...args);
  }

  /**
   * Many calls at once, answered in order (each its value or its Error; never throws). On a single Redis
   * they travel as one pipeline, one write and one read for all of them, and only calls answered NOSCRIPT
   * go again with EVAL. A cluster pipeline must stay on one node's slots, so there each call goes alone.
   */
  async runEach(redis: RedisClient, calls: readonly ScriptCall[]): Promise<unknown[]> {
    const alone = (call: ScriptCall) => this.run(redis, call.keys, call.args).catch((error: unknown) => error);
    if (redis.isCluster || calls.length < 2) return Promise.all(calls.map(alone));
    const pipeline = redis.pipeline();
    for (const call of calls) pipeline.evalsha(this.sha, call.keys.length, ...call.keys, ...call.args);
    let answers: [Error | null, unknown][];
    try {
      answers = (await pipeline.exec()) ?? [];
    } catch (error) {
      return calls.map(() => error);
    }
    return Promise.all(
      calls.map((call, index) => {
        const [error, value] = answers[index] ?? [new Error('no answer in the pipeline'), null];
        if (error === null) return value;
        if (!isNoScript(error)) return error;
        return this.byText(redis, call).catch((evalError: unknown) => evalError);
      }),
    );
  }
}
