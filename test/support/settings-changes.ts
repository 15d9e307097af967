import Redis from 'ioredis';
import { type Environment, RedisKeys } from '@app/runtime';

export interface SettingsChangeListener {
  /** The notices received so far for one account (each is its id). */
  of(accountId: number): string[];
  close(): void;
}

/** Listens on the settings channel the workers follow; resolves once subscribed, so no later notice is missed. */
export async function listenForSettingsChanges(environment: Environment): Promise<SettingsChangeListener> {
  const subscriber = new Redis(environment.redis.url);
  const received: string[] = [];
  subscriber.on('message', (_channel: string, message: string) => received.push(message));
  await subscriber.subscribe(new RedisKeys(environment.redis.prefix).settingsChannel());
  return {
    of: (accountId) => received.filter((message) => message === String(accountId)),
    close: () => subscriber.disconnect(),
  };
}
