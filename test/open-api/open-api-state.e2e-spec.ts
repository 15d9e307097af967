import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { openApiSign } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { deleteKeysUnder, useOwnRedisPrefix } from '../support/worker-process';

/**
 * CONTRACT §2, "limits hold without growing state": calls refused by the per-account limit leave no key
 * behind, a remembered nonce takes the same room whatever its length, and longer than 128 is 20624.
 * Growth is read from Redis itself (the keys and bytes under this suite's own prefix).
 */
const PREFIX = useOwnRedisPrefix('open-api-state');
const LIMIT = 5;
let configApi: RunningApp;
let redis: Redis;

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule, { OPEN_API_RATE_LIMIT: String(LIMIT) });
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
});

afterAll(async () => {
  await configApi?.close();
  redis?.disconnect();
  await deleteKeysUnder(PREFIX);
});

/** Every key under the prefix, with the bytes Redis holds for each. */
async function keysUnderPrefix(): Promise<{ keys: string[]; bytes: number }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  let bytes = 0;
  for (const key of keys) bytes += (await redis.memory('USAGE', key)) ?? 0;
  return { keys: keys.sort(), bytes };
}

/** GET push_settings signed with this nonce. */
async function callWithNonce(account: TestAccount, nonce: string): Promise<{ status: number; code: number }> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const sign = openApiSign({ email: account.email, openApiToken: account.open_api_token, timestamp, nonce });
  const query = new URLSearchParams({ email: account.email, timestamp, nonce, sign_version: 'v2', sign });
  const response = await fetch(`${configApi.url}/open_api_v1/push_settings?${query.toString()}`);
  const body = (await response.json()) as { code: number };
  return { status: response.status, code: body.code };
}

const longNonce = (): string => randomBytes(96).toString('base64url');

it('leaves no key behind for signed calls the per-account limit refuses', async () => {
  const account = await createAccount(configApi);
  for (let call = 0; call < LIMIT; call += 1) expect(await callWithNonce(account, longNonce())).toEqual({ status: 200, code: 1000 });
  const before = await keysUnderPrefix();

  const refused: number[] = [];
  for (let call = 0; call < 200; call += 1) refused.push((await callWithNonce(account, longNonce())).status);
  expect(new Set(refused)).toEqual(new Set([429]));

  const after = await keysUnderPrefix();
  expect(after.keys).toEqual(before.keys);
  // The counter of the limit holds its size whatever the number of refused calls.
  expect(after.bytes).toBeLessThanOrEqual(before.bytes + 64);
});

it('remembers a nonce in the same room whatever its length, and refuses one longer than 128 characters', async () => {
  const account = await createAccount(configApi);
  const nonceKeys = async (): Promise<string[]> => (await keysUnderPrefix()).keys.filter((key) => key.startsWith(`${PREFIX}:nonce:${account.id}:`));

  expect(await callWithNonce(account, 'a')).toEqual({ status: 200, code: 1000 });
  expect(await callWithNonce(account, 'b'.repeat(128))).toEqual({ status: 200, code: 1000 });
  const [short, long] = await nonceKeys();
  expect(short.length).toBe(long.length);
  expect(await redis.memory('USAGE', short)).toBe(await redis.memory('USAGE', long));
  // Remembered all the same: the digest stands for the nonce.
  expect(await callWithNonce(account, 'b'.repeat(128))).toEqual({ status: 401, code: 20623 });

  expect(await callWithNonce(account, 'c'.repeat(129))).toEqual({ status: 401, code: 20624 });
  expect(await nonceKeys()).toHaveLength(2);
});
