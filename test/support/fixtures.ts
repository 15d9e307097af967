import type { INestApplication } from '@nestjs/common';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { completePermissions, type EventAction, type Permissions, type PushContentType, SAMPLE_MESSAGES } from '@app/payloads';
import { publishSettingsChanged, REDIS, RedisKeys } from '@app/runtime';
import type { RunningApp } from './apps';

export const ADMIN_HEADERS = { authorization: `Bearer ${process.env.ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json' };
export const INGEST_HEADERS = { authorization: `Bearer ${(process.env.INGEST_TOKEN ?? '').split(',')[0]}`, 'content-type': 'application/json' };

/**
 * POSTs one event to ingest for the account, expects 202, and answers its event_id: the action's sample
 * message (Customer_create's unless said otherwise) with `fields` in place of its own.
 */
export async function ingestSampleEvent(ingest: RunningApp, accountId: number, action: EventAction = 'Customer_create', fields: Record<string, unknown> = {}): Promise<string> {
  const response = await fetch(`${ingest.url}/v1/events`, {
    method: 'POST',
    headers: INGEST_HEADERS,
    body: JSON.stringify({ account_id: accountId, action, message: { ...SAMPLE_MESSAGES[action], ...fields } }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { event_id: string }).event_id;
}

export interface TestAccount {
  id: number;
  email: string;
  name: string | null;
  open_api_token: string;
  signing_secret: string;
}

let counter = 0;

/** A fresh account per test, through the real admin API; emails are unique so tests never share state. */
export async function createAccount(configApi: RunningApp, fields: { name?: string; id?: number } = {}): Promise<TestAccount> {
  counter += 1;
  const email = `user-${process.pid}-${Date.now()}-${counter}@example.com`;
  const response = await fetch(`${configApi.url}/admin/v1/accounts`, {
    method: 'POST',
    headers: ADMIN_HEADERS,
    body: JSON.stringify({ email, ...fields }),
  });
  if (response.status !== 201) throw new Error(`creating an account answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as TestAccount;
}

/**
 * Sets callback settings straight in the database and announces the change, for tests of ingest and
 * delivery that do not exercise the Open API itself.
 */
export async function setCallbackSettings(
  app: INestApplication,
  accountId: number,
  settings: { pushUrl?: string | null; contentType?: PushContentType; permissions?: Partial<Permissions> | 'all' },
): Promise<void> {
  const dataSource = app.get(DataSource);
  const permissions =
    settings.permissions === 'all'
      ? Object.fromEntries(Object.keys(completePermissions(null)).map((key) => [key, true]))
      : completePermissions(settings.permissions);
  await dataSource.query(
    `UPDATE callback_settings SET permissions = $2::jsonb, version = version + 1, updated_at = now() WHERE account_id = $1`,
    [accountId, JSON.stringify(permissions)],
  );
  // The push URL is the primary destination's target; a plaintext value is read as it is (SecretBox).
  await dataSource.query(
    `UPDATE destinations
        SET target = COALESCE($2, target), target_shown = COALESCE($2, target_shown), content_type = COALESCE($3, content_type),
            version = version + 1, updated_at = now()
      WHERE account_id = $1 AND id = 'primary'`,
    [accountId, settings.pushUrl ?? null, settings.contentType ?? null],
  );
  const redis = app.get<Redis>(REDIS);
  await publishSettingsChanged(redis, app.get(RedisKeys), accountId);
}

/**
 * A new account whose callbacks go to `target` (a receiver or a URL) with every permission, in JSON
 * unless said otherwise, set through `app` (the app whose database and Redis the suite's worker reads).
 */
export async function accountPushingTo(configApi: RunningApp, app: INestApplication, target: { url: string } | string, contentType: PushContentType = 'JSON'): Promise<TestAccount> {
  const account = await createAccount(configApi);
  await setCallbackSettings(app, account.id, { pushUrl: typeof target === 'string' ? target : target.url, contentType, permissions: 'all' });
  return account;
}

/**
 * A new account whose callbacks go to `pushUrl` (JSON, every permission) at `maxPerSecond` (null: no
 * pace), written the way the settings code writes them: the row, its version, a notice to the workers.
 */
export async function pacedAccount(configApi: RunningApp, app: INestApplication, pushUrl: string, maxPerSecond: number | null): Promise<number> {
  const account = await accountPushingTo(configApi, app, pushUrl);
  await app.get(DataSource).query(`UPDATE destinations SET max_per_second = $2, version = version + 1 WHERE account_id = $1 AND id = 'primary'`, [account.id, maxPerSecond]);
  await publishSettingsChanged(app.get<Redis>(REDIS), app.get(RedisKeys), account.id);
  return account.id;
}
