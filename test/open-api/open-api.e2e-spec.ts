import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PERMISSION_KEYS } from '@app/payloads';
import { REDIS } from '@app/runtime';
import { openApiSign } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { primaryDestinationOf } from '../support/model-deliveries';
import { listenForSettingsChanges } from '../support/settings-changes';
import { fetchFrom } from '../support/open-api-client';
import { waitFor } from '@app/testing';

interface SignOverrides {
  email?: string;
  timestamp?: string | null;
  nonce?: string | null;
  sign_version?: string | null;
  sign?: string | null;
  token?: string;
}

/** The five authentication parameters, correctly signed unless an override says otherwise (null leaves one out). */
function authQuery(account: TestAccount, overrides: SignOverrides = {}): string {
  const email = overrides.email ?? account.email;
  const timestamp = overrides.timestamp === undefined ? String(Math.floor(Date.now() / 1000)) : overrides.timestamp;
  const nonce = overrides.nonce === undefined ? randomUUID() : overrides.nonce;
  const sign =
    overrides.sign === undefined
      ? openApiSign({ email, openApiToken: overrides.token ?? account.open_api_token, timestamp: timestamp ?? '', nonce: nonce ?? '' })
      : overrides.sign;
  const params: Record<string, string | null> = {
    email,
    timestamp,
    nonce,
    sign_version: overrides.sign_version === undefined ? 'v2' : overrides.sign_version,
    sign,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null) query.set(name, value);
  return query.toString();
}

interface OpenApiBody {
  code: number;
  message: string;
  exception?: { message: string };
  [field: string]: unknown;
}

interface Answer {
  status: number;
  body: OpenApiBody;
  headers: Headers;
}

async function call(
  app: RunningApp,
  account: TestAccount,
  operation: string,
  body?: unknown,
  {
    overrides,
    query,
    contentType = 'application/json',
    localAddress,
  }: { overrides?: SignOverrides; query?: string; contentType?: string; localAddress?: string } = {},
): Promise<Answer> {
  const init: RequestInit =
    body === undefined
      ? { method: 'GET' }
      : { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) };
  const url = `${app.url}/open_api_v1/${operation}?${query ?? authQuery(account, overrides)}`;
  // From another loopback address when asked: failed authentications are limited per client address.
  const response = localAddress ? await fetchFrom(localAddress, url, init) : await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

function expectOpenApiError(answer: Answer, status: number, code: number, exceptionMessage?: string | RegExp): void {
  expect({ status: answer.status, code: answer.body?.code }).toEqual({ status, code });
  expect(typeof answer.body.message).toBe('string');
  const exception = answer.body.exception?.message;
  expect(typeof exception).toBe('string');
  if (typeof exceptionMessage === 'string') expect(exception).toBe(exceptionMessage);
  else if (exceptionMessage) expect(exception).toMatch(exceptionMessage);
}

const allFalse = Object.fromEntries(PERMISSION_KEYS.map((key) => [key, false]));

describe('Open API (/open_api_v1)', () => {
  let api: RunningApp;
  /** A second config-api instance on the same database and Redis, refusing private targets. */
  let strictApi: RunningApp;

  beforeAll(async () => {
    [api, strictApi] = await Promise.all([startApp(ConfigApiModule), startApp(ConfigApiModule, { ALLOW_PRIVATE_TARGETS: 'false' })]);
  });
  afterAll(async () => {
    await Promise.all([api?.close(), strictApi?.close()]);
  });

  describe('operations', () => {
    it('set_url stores and echoes the address', async () => {
      const account = await createAccount(api);
      const answer = await call(api, account, 'set_url', { push_url: 'https://example.com/hooks/1' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ code: 1000, message: 'OK', push_url: 'https://example.com/hooks/1' });
      const settings = await call(api, account, 'push_settings');
      expect(settings.body.push_url).toBe('https://example.com/hooks/1');
    });

    it('push_settings shows the defaults of a new account', async () => {
      const account = await createAccount(api);
      const answer = await call(api, account, 'push_settings');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        code: 1000,
        message: 'OK',
        push_url: null,
        push_content_type: 'application/x-www-form-urlencoded',
        permissions: allFalse,
        ordering: 'none',
        max_per_second: null,
      });
    });

    it('set_push_content_type accepts JSON and the form type in any case', async () => {
      const account = await createAccount(api);
      const json = await call(api, account, 'set_push_content_type', { push_content_type: 'json' });
      expect(json.status).toBe(200);
      expect(json.body).toEqual({ code: 1000, message: 'OK', webhook_push_type: 'JSON' });
      expect((await call(api, account, 'push_settings')).body.push_content_type).toBe('JSON');

      const form = await call(api, account, 'set_push_content_type', { push_content_type: 'Application/x-www-form-urlencoded' });
      expect(form.status).toBe(200);
      expect(form.body).toEqual({ code: 1000, message: 'OK', webhook_push_type: 'application/x-www-form-urlencoded' });
      expect((await call(api, account, 'push_settings')).body.push_content_type).toBe('application/x-www-form-urlencoded');
    });

    it.each([[{ push_content_type: 'text/xml' }], [{}], [{ push_content_type: null }]])(
      'set_push_content_type refuses %j with the seed text and keeps the old value',
      async (body) => {
        const account = await createAccount(api);
        const answer = await call(api, account, 'set_push_content_type', body);
        expectOpenApiError(answer, 400, 2000, 'sorry you entered an incorrect value');
        expect(answer.body).toEqual({ code: 2000, message: 'Unknown error', exception: { message: 'sorry you entered an incorrect value' } });
        expect((await call(api, account, 'push_settings')).body.push_content_type).toBe('application/x-www-form-urlencoded');
      },
    );

    it('set_permissions updates only the keys sent and answers all eleven', async () => {
      const account = await createAccount(api);
      const first = await call(api, account, 'set_permissions', { permissions: { customer_create: true, im_survey_vote_create: true } });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        code: 1000,
        message: 'OK',
        permissions: { ...allFalse, customer_create: true, im_survey_vote_create: true },
      });
      expect(Object.keys(first.body.permissions as object)).toEqual([...PERMISSION_KEYS]);

      const second = await call(api, account, 'set_permissions', { permissions: { customer_update: true, im_survey_vote_create: false } });
      expect(second.body.permissions).toEqual({ ...allFalse, customer_create: true, customer_update: true });
      expect((await call(api, account, 'push_settings')).body.permissions).toEqual(second.body.permissions);
    });

    it.each([[{}], [{ permissions: {} }], [{ permissions: [] }], [{ permissions: 'customer_create' }]])(
      'set_permissions refuses %j with the seed text',
      async (body) => {
        const account = await createAccount(api);
        expectOpenApiError(await call(api, account, 'set_permissions', body), 400, 2000, 'param is missing or the value is empty: permissions');
      },
    );

    it('set_permissions names an unknown key or a non-boolean value and changes nothing', async () => {
      const account = await createAccount(api);
      const unknown = await call(api, account, 'set_permissions', { permissions: { customer_create: true, ticket_create: true } });
      expectOpenApiError(unknown, 400, 2000, /ticket_create/);
      const notBoolean = await call(api, account, 'set_permissions', { permissions: { customer_update: 'true' } });
      expectOpenApiError(notBoolean, 400, 2000, /customer_update/);
      expect((await call(api, account, 'push_settings')).body.permissions).toEqual(allFalse);
    });

    it.each([
      ['absent', {}, /push_url/],
      ['not a string', { push_url: 12 }, /push_url must be a string/],
      ['a bad scheme', { push_url: 'ftp://example.com/x' }, /http or https/],
      ['too long', { push_url: `https://example.com/${'a'.repeat(2040)}` }, /2048/],
      ['not a URL', { push_url: 'example dot com' }, /not a valid URL/],
    ])('set_url refuses a URL that is %s', async (_case, body, message) => {
      const account = await createAccount(api);
      expectOpenApiError(await call(api, account, 'set_url', body), 400, 2000, message);
      expect((await call(api, account, 'push_settings')).body.push_url).toBeNull();
    });

    it.each([['http://127.0.0.1/x'], ['http://10.0.0.1/x'], ['http://[::1]:8080/x'], ['http://localhost/x']])(
      'set_url refuses the private target %s when ALLOW_PRIVATE_TARGETS=false',
      async (pushUrl) => {
        const account = await createAccount(strictApi);
        expectOpenApiError(await call(strictApi, account, 'set_url', { push_url: pushUrl }), 400, 2000, /non-public address/);
        // The instance that allows private targets (the test default) takes the same URL.
        expect((await call(api, account, 'set_url', { push_url: pushUrl })).status).toBe(200);
      },
    );

    it('refuses a non-JSON body with 415 in the Open API shape', async () => {
      const account = await createAccount(api);
      const answer = await call(api, account, 'set_url', 'push_url=https%3A%2F%2Fexample.com', {
        contentType: 'application/x-www-form-urlencoded',
      });
      expectOpenApiError(answer, 415, 2000, /application\/json/);
    });

    it('answers malformed JSON with 400 in the Open API shape', async () => {
      const account = await createAccount(api);
      const answer = await call(api, account, 'set_url', '{"push_url":', {});
      expectOpenApiError(answer, 400, 2000, /JSON/);
    });

    it('answers a body over 1 MiB with 413 and an unknown path with 404, both in the Open API shape', async () => {
      const account = await createAccount(api);
      const tooLarge = await call(api, account, 'set_url', { push_url: 'https://example.com/x', padding: 'x'.repeat(1024 * 1024) });
      expectOpenApiError(tooLarge, 413, 2000, /too large/);
      const missing = await fetch(`${api.url}/open_api_v1/no_such_operation?${authQuery(account)}`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ code: 2000, message: 'Unknown error', exception: { message: expect.any(String) } });
    });

    it('counts calls by operation and status in /metrics', async () => {
      const account = await createAccount(api);
      expect((await call(api, account, 'push_settings')).status).toBe(200);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { sign_version: 'v1' } }), 401, 2059);
      const metrics = await (await fetch(`${api.url}/metrics`)).text();
      expect(metrics).toMatch(/open_api_requests_total\{operation="push_settings",status="200"\} [1-9]/);
      expect(metrics).toMatch(/open_api_requests_total\{operation="push_settings",status="401"\} [1-9]/);
    });

    it('announces every change on the settings channel', async () => {
      const account = await createAccount(api);
      const changes = await listenForSettingsChanges(api.environment);
      try {
        expect((await call(api, account, 'set_url', { push_url: 'https://example.com/announced' })).status).toBe(200);
        expect((await call(api, account, 'set_permissions', { permissions: { customer_create: true } })).status).toBe(200);
        expect((await call(api, account, 'set_push_content_type', { push_content_type: 'JSON' })).status).toBe(200);
        const mine = await waitFor('three settings-changed messages', () => changes.of(account.id).length >= 3 && changes.of(account.id));
        expect(mine).toEqual([String(account.id), String(account.id), String(account.id)]);
        // A refused change announces nothing.
        expectOpenApiError(await call(api, account, 'set_url', { push_url: 'gopher://x' }), 400, 2000);
        expect((await call(api, account, 'push_settings')).status).toBe(200);
        // A change of another account after them: once its notice is here, any notice of theirs would be (one channel, in order).
        const marker = await createAccount(api);
        expect((await call(api, marker, 'set_url', { push_url: 'https://example.com/marker' })).status).toBe(200);
        await waitFor('the marker change’s notice', () => changes.of(marker.id).length === 1);
        expect(changes.of(account.id)).toHaveLength(3);
        // Each change bumped the version of the row it changed once (both start at 0 for a new account):
        // the permissions are the account's settings, the push URL and its content type its primary destination's.
        const [row] = await api.app.get(DataSource).query('SELECT version FROM callback_settings WHERE account_id = $1', [account.id]);
        expect(row.version).toBe(1);
        expect((await primaryDestinationOf(api.app.get(DataSource), account.id))?.version).toBe(2);
      } finally {
        changes.close();
      }
    });
  });

  describe('authentication', () => {
    let account: TestAccount;
    beforeAll(async () => {
      account = await createAccount(api);
    });

    it('accepts the email in another letter case', async () => {
      expect((await call(api, account, 'push_settings', undefined, { overrides: { email: account.email.toUpperCase() } })).status).toBe(200);
    });

    it('refuses an unknown email with 2059', async () => {
      const answer = await call(api, account, 'push_settings', undefined, { overrides: { email: 'nobody-here@example.com' } });
      expectOpenApiError(answer, 401, 2059);
    });

    it('refuses a wrong sign with 2059 and the same message as an unknown email', async () => {
      const wrong = await call(api, account, 'push_settings', undefined, { overrides: { token: 'not-the-token' } });
      expectOpenApiError(wrong, 401, 2059);
      const unknown = await call(api, account, 'push_settings', undefined, { overrides: { email: 'nobody-here@example.com' } });
      expect(wrong.body).toEqual(unknown.body);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { sign: null } }), 401, 2059);
    });

    it('refuses a sign_version other than v2 with 2059', async () => {
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { sign_version: 'v1' } }), 401, 2059, /v2/);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { sign_version: null } }), 401, 2059, /v2/);
    });

    it('refuses a missing or non-integer timestamp with 20621', async () => {
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { timestamp: null } }), 401, 20621);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { timestamp: '1700000000.5' } }), 401, 20621);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { timestamp: 'yesterday' } }), 401, 20621);
    });

    it('refuses a timestamp more than 300 s away with 20622', async () => {
      const now = Math.floor(Date.now() / 1000);
      for (const timestamp of [now - 400, now + 400]) {
        expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { timestamp: String(timestamp) } }), 401, 20622);
      }
      // Inside the window is fine.
      expect((await call(api, account, 'push_settings', undefined, { overrides: { timestamp: String(now - 250) } })).status).toBe(200);
    });

    it('refuses a missing or empty nonce with 20624', async () => {
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { nonce: null } }), 401, 20624);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { nonce: '' } }), 401, 20624);
    });

    it('refuses a replayed nonce with 20623, also on another instance', async () => {
      const query = authQuery(account);
      expect((await call(api, account, 'push_settings', undefined, { query })).status).toBe(200);
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { query }), 401, 20623);
      expectOpenApiError(await call(strictApi, account, 'push_settings', undefined, { query }), 401, 20623);
    });

    it('does not burn the nonce on a request that fails authentication', async () => {
      const nonce = randomUUID();
      expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { nonce, token: 'wrong' } }), 401, 2059);
      expect((await call(api, account, 'push_settings', undefined, { overrides: { nonce } })).status).toBe(200);
    });

    it('uses one nonce space per account', async () => {
      const other = await createAccount(api);
      const nonce = randomUUID();
      expect((await call(api, account, 'push_settings', undefined, { overrides: { nonce } })).status).toBe(200);
      expect((await call(api, other, 'push_settings', undefined, { overrides: { nonce } })).status).toBe(200);
    });

    it('ignores body fields it does not know (the body is not signed)', async () => {
      const answer = await call(api, account, 'set_url', { push_url: 'https://example.com/signed', extra: 'ignored' });
      expect(answer.body).toEqual({ code: 1000, message: 'OK', push_url: 'https://example.com/signed' });
    });
  });

  describe('rate limit', () => {
    it('allows 60 calls a minute per account across instances, then answers 429 with Retry-After', async () => {
      const account = await createAccount(api);
      const other = await createAccount(api);
      for (let index = 0; index < 60; index += 1) {
        const answer = await call(index % 2 === 0 ? api : strictApi, account, 'push_settings');
        expect(answer.status).toBe(200);
      }
      const limited = await call(api, account, 'push_settings');
      expectOpenApiError(limited, 429, 2000, /60 calls a minute/);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expectOpenApiError(await call(strictApi, account, 'push_settings'), 429, 2000);
      // The budget is per account.
      expect((await call(api, other, 'push_settings')).status).toBe(200);
    });

    it('does not count calls that fail authentication', async () => {
      const account = await createAccount(api);
      for (let index = 0; index < 61; index += 1) {
        // Spread over four client addresses, each under the failed-authentication limit (20 a minute per email and address).
        const localAddress = `127.0.0.${2 + (index % 4)}`;
        expectOpenApiError(await call(api, account, 'push_settings', undefined, { overrides: { token: 'wrong' }, localAddress }), 401, 2059);
      }
      expect((await call(api, account, 'push_settings')).status).toBe(200);
    });
  });

  describe('when Redis goes away', () => {
    let offline: RunningApp;
    let offlineRedis: Redis;
    beforeAll(async () => {
      offline = await startApp(ConfigApiModule);
      offlineRedis = offline.app.get<Redis>(REDIS);
      // Drops this instance's command connection for good (no reconnect): every Redis command now fails at once.
      offlineRedis.disconnect();
      await waitFor('the Redis connection to end', () => offlineRedis.status === 'end');
    });
    afterAll(async () => {
      // Reconnected so the app shuts down along its normal path (disconnecting an ended ioredis client leaves a handle open).
      await offlineRedis?.connect();
      await offline?.close();
    });

    it('refuses signed calls with 503 instead of skipping replay protection', async () => {
      const account = await createAccount(api);
      expectOpenApiError(await call(offline, account, 'push_settings'), 503, 2000, /replay protection is unavailable/);
      // Nothing was claimed or counted: the same request still works on a healthy instance.
      const query = authQuery(account);
      expectOpenApiError(await call(offline, account, 'push_settings', undefined, { query }), 503, 2000);
      expect((await call(api, account, 'push_settings', undefined, { query })).status).toBe(200);
    });
  });
});
