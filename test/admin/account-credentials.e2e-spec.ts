import { Webhook } from 'standardwebhooks';
import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { startApp, useApps } from '../support/apps';
import { type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { freePort } from '@app/testing';
import { ADMIN_HEADERS, createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { eventRow, sendEvents, useOwnRedisPrefix } from '../support/worker-process';

/**
 * CONTRACT §3: rotate-token and revoke-previous-secret. The token is checked by two config-api
 * processes (the built app, twice), so a cache in either would show; the revocation by a real delivery
 * through a worker that had the two-secret settings cached.
 */
useOwnRedisPrefix('account-credentials');
jest.setTimeout(90_000);


async function adminPost(baseUrl: string, path: string, headers: Record<string, string> = ADMIN_HEADERS): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/admin/v1/accounts${path}`, { method: 'POST', headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A signed Open API read; answers the HTTP status and the body's code (2059 for a refused sign). */
async function pushSettings(baseUrl: string, email: string, openApiToken: string): Promise<{ status: number; code: unknown }> {
  const query = new URLSearchParams(openApiQuery({ email, openApiToken }));
  const response = await fetch(`${baseUrl}/open_api_v1/push_settings?${query.toString()}`);
  const body = (await response.json()) as { code?: unknown };
  return { status: response.status, code: body.code };
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

describe('rotate-token on two config-api processes', () => {
  const processes: BuiltAppProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    for (let index = 0; index < 2; index += 1) {
      const port = await freePort();
      const running = spawnBuiltApp('config-api', { CONFIG_API_PORT: String(port), LISTEN_HOST: '127.0.0.1' });
      processes.push(running);
      await running.waitForOutput(`listening on http://127.0.0.1:${port}`, 60_000);
      urls.push(`http://127.0.0.1:${port}`);
    }
  });

  afterAll(async () => {
    await Promise.all(processes.map((running) => running.terminate(10_000)));
  });

  it('refuses the old token (2059) on every process from the answer on, and accepts the new one on every process', async () => {
    const [first, second] = urls;
    const account = (await fetch(`${first}/admin/v1/accounts`, {
      method: 'POST',
      headers: ADMIN_HEADERS,
      body: JSON.stringify({ email: `rotate-token-${process.pid}-${Date.now()}@example.com` }),
    }).then((response) => response.json())) as TestAccount;
    // Both processes have served the old token before, so anything they kept of it would be used below.
    for (const url of urls) expect(await pushSettings(url, account.email, account.open_api_token)).toEqual({ status: 200, code: 1000 });

    const rotated = await adminPost(second, `/${account.id}/rotate-token`);
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).toEqual(['open_api_token']);
    const newToken = String(rotated.body.open_api_token);
    expect(newToken).not.toBe(account.open_api_token);
    expect(newToken.length).toBeGreaterThanOrEqual(24);

    for (const url of urls) {
      expect(await pushSettings(url, account.email, account.open_api_token)).toEqual({ status: 401, code: 2059 });
      expect(await pushSettings(url, account.email, newToken)).toEqual({ status: 200, code: 1000 });
    }
  });
});

describe('credential routes', () => {
  const { configApi, worker } = useApps({ configApi: ConfigApiModule, worker: [DeliveryWorkerModule, { RETRY_SCHEDULE: '1s,1s,1s' }] });
  let target: TestReceiver;

  beforeAll(async () => {
    target = await new TestReceiver().start();
  });

  afterAll(async () => {
    await target?.stop();
  });

  it('answers 404 for an unknown account and 401 without the admin token', async () => {
    for (const route of ['rotate-token', 'revoke-previous-secret']) {
      const missing = await adminPost(configApi.url, `/2147483000/${route}`);
      expect(missing).toMatchObject({ status: 404, body: { error: 'not_found', message: 'account 2147483000 does not exist' } });
      const account = await createAccount(configApi);
      expect((await adminPost(configApi.url, `/${account.id}/${route}`, { authorization: 'Bearer not-the-admin-token' })).status).toBe(401);
    }
  });

  it('revoke-previous-secret answers the account view with no previous secret, and is a no-op when there is none', async () => {
    const account = await createAccount(configApi);
    expect((await adminPost(configApi.url, `/${account.id}/rotate-secret`)).status).toBe(200);
    const before = (await fetch(`${configApi.url}/admin/v1/accounts/${account.id}`, { headers: ADMIN_HEADERS }).then((response) => response.json())) as Record<string, unknown>;
    expect(before.previous_secret_expires_at).toEqual(expect.any(String));

    const revoked = await adminPost(configApi.url, `/${account.id}/revoke-previous-secret`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: account.id, email: account.email, previous_secret_expires_at: null });
    expect(revoked.body).not.toHaveProperty('signing_secret');
    expect(await adminPost(configApi.url, `/${account.id}/revoke-previous-secret`)).toMatchObject({ status: 200, body: { previous_secret_expires_at: null } });
  });

  it('stops the second signature at once: the next delivery carries one signature, made with the new secret only', async () => {
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    const deliver = async (): Promise<ReceivedRequest> => {
      const [event] = await sendEvents(worker.app, account.id, [{ action: 'Customer_create', message: structuredClone(SAMPLE_MESSAGES.Customer_create) }]);
      await waitFor(`event ${event.eventId} delivered`, async () => (await eventRow(worker.app, event.eventId)).status === 'delivered', { timeoutMs: 60_000 });
      const request = target.requests.find((candidate) => header(candidate, 'webhook-id') === event.eventId);
      if (!request) throw new Error(`event ${event.eventId} is delivered but the receiver has no request with its webhook-id`);
      return request;
    };
    const headersOf = (request: ReceivedRequest, signature = header(request, 'webhook-signature')) => ({
      'webhook-id': header(request, 'webhook-id'),
      'webhook-timestamp': header(request, 'webhook-timestamp'),
      'webhook-signature': signature,
    });

    const rotated = await adminPost(configApi.url, `/${account.id}/rotate-secret`);
    const newSecret = String(rotated.body.signing_secret);
    // The worker now holds both secrets in its settings cache.
    const during = await deliver();
    expect(header(during, 'webhook-signature').split(' ')).toHaveLength(2);

    expect((await adminPost(configApi.url, `/${account.id}/revoke-previous-secret`)).status).toBe(200);
    const after = await deliver();
    const signatures = header(after, 'webhook-signature').split(' ');
    expect(signatures).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(after.body, headersOf(after))).not.toThrow();
    expect(() => new Webhook(account.signing_secret).verify(after.body, headersOf(after))).toThrow();
  });

  it('with Redis unreachable: revoke is stored and answers 503 saying the workers were not told; rotate-secret still answers the new secret', async () => {
    const account = await createAccount(configApi);
    expect((await adminPost(configApi.url, `/${account.id}/rotate-secret`)).status).toBe(200);
    // Port 9 (discard) has no Redis: every publish fails at once.
    const cutOff = await startApp(ConfigApiModule, { REDIS_URL: 'redis://127.0.0.1:9' });
    try {
      const revoked = await adminPost(cutOff.url, `/${account.id}/revoke-previous-secret`);
      expect(revoked).toEqual({
        status: 503,
        body: {
          error: 'service_unavailable',
          message: 'the previous secret is revoked in the database, but Redis could not tell the workers: they stop signing with it within 30 s',
        },
      });
      const view = (await fetch(`${configApi.url}/admin/v1/accounts/${account.id}`, { headers: ADMIN_HEADERS }).then((response) => response.json())) as Record<string, unknown>;
      expect(view.previous_secret_expires_at).toBeNull();

      const rotated = await adminPost(cutOff.url, `/${account.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(String(rotated.body.signing_secret)).toMatch(/^whsec_/);
    } finally {
      await cutOff.close();
    }
  });
});
