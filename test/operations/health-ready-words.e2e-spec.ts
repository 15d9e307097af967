import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount } from '../support/fixtures';
import { waitFor } from '@app/testing';

/**
 * CONTRACT §1: /health/ready says which dependency is down in words of its own, never a driver's
 * message (hosts, ports, user names). Each dependency is cut off inside one app instance.
 */
let running: RunningApp | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function ready(): Promise<{ status: number; text: string }> {
  const response = await fetch(`${running?.url ?? ''}/health/ready`);
  return { status: response.status, text: await response.text() };
}

/** Nothing a driver would say: addresses, ports, users, stream states. */
function expectNoDriverWords(text: string): void {
  expect(text).not.toMatch(/\d+\.\d+\.\d+\.\d+|:\d{2,5}\b|6379|5432|postgres@|user|stream|ECONN|writeable|terminated|initialized/i);
}

it('names Redis as down without the driver message', async () => {
  running = await startApp(ConfigApiModule);
  const redis = running.app.get<Redis>(REDIS);
  redis.disconnect();
  await waitFor('the Redis connection to end', () => redis.status === 'end');
  try {
    const answer = await ready();
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text)).toEqual({
      error: 'service_unavailable',
      message: 'not ready: redis down: the check failed',
      status: 'unavailable',
      checks: { postgres: 'ok', redis: 'down: the check failed', secrets: 'ok' },
    });
    expectNoDriverWords(answer.text);
  } finally {
    await redis.connect();
  }
});

it('names PostgreSQL as down without the driver message', async () => {
  running = await startApp(ConfigApiModule);
  const dataSource = running.app.get(DataSource);
  // Its pool closed, every query fails with a library message of its own, which must not be echoed.
  await dataSource.destroy();
  try {
    const answer = await ready();
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text).checks).toEqual({ postgres: 'down: the check failed', redis: 'ok', secrets: 'down: the check failed' });
    expectNoDriverWords(answer.text);
  } finally {
    await dataSource.initialize();
  }
});

it('is not ready, and says why, when SECRETS_KEY does not open the stored secrets', async () => {
  const [keyId] = (process.env.SECRETS_KEY ?? '').split(':');
  const otherKeys = [
    // The same key id with other key material: a key mistyped or copied from another installation.
    [`${keyId}:${Buffer.alloc(32, 9).toString('base64')}`, `down: a secret sealed with key id "${keyId}" does not decrypt with that key (wrong key material, or the value was altered)`],
    // Another key id, and the old one not kept in SECRETS_PREVIOUS_KEYS.
    [`other-key:${Buffer.alloc(32, 9).toString('base64')}`, `down: a secret is sealed with key id "${keyId}", which is neither SECRETS_KEY nor in SECRETS_PREVIOUS_KEYS`],
  ];
  // An account sealed with the run's own key, so the newest stored secrets are this key's.
  const own = await startApp(ConfigApiModule);
  try {
    await createAccount(own);
  } finally {
    await own.close();
  }
  for (const [secretsKey, why] of otherKeys) {
    running = await startApp(ConfigApiModule, { SECRETS_KEY: secretsKey });
    const answer = await ready();
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'unavailable', checks: { postgres: 'ok', redis: 'ok', secrets: why } });
    expect(answer.text).not.toContain(secretsKey.split(':')[1]);
    await running.close();
    running = undefined;
  }
});
