import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '@app/runtime';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from './support/apps';
import { waitFor } from './support/wait-for';

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
      checks: { postgres: 'ok', redis: 'down: the check failed' },
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
    expect(JSON.parse(answer.text).checks).toEqual({ postgres: 'down: the check failed', redis: 'ok' });
    expectNoDriverWords(answer.text);
  } finally {
    await dataSource.initialize();
  }
});
