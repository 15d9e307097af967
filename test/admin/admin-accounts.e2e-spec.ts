import { randomInt, randomUUID } from 'node:crypto';
import { PERMISSION_KEYS } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, useApps } from '../support/apps';
import { newDestinationDefaults } from '../support/destination-steps';
import { ADMIN_HEADERS, createAccount } from '../support/fixtures';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function admin(app: RunningApp, method: string, path: string, body?: unknown, headers: Record<string, string> = ADMIN_HEADERS): Promise<Answer> {
  const response = await fetch(`${app.url}/admin/v1${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const uniqueEmail = (): string => `admin-${randomUUID()}@example.com`;

/**
 * A random id far above what the identity sequence hands out in a test run. (An explicit id moves the
 * sequence past it, so consecutive ids would collide with accounts other tests create meanwhile.)
 */
const randomAccountId = (): number => 1_000_000_000 + randomInt(1_000_000_000);

describe('admin accounts API (/admin/v1/accounts)', () => {
  const { api } = useApps({ api: ConfigApiModule });

  it('refuses a missing or wrong bearer token with 401', async () => {
    const missing = await admin(api, 'POST', '/accounts', { email: uniqueEmail() }, { 'content-type': 'application/json' });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'unauthorized', message: 'missing bearer token' });

    const wrong = await admin(api, 'POST', '/accounts', { email: uniqueEmail() }, {
      'content-type': 'application/json',
      authorization: 'Bearer not-the-admin-token-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('unauthorized');

    const account = await createAccount(api);
    expect((await admin(api, 'GET', `/accounts/${account.id}`, undefined, {})).status).toBe(401);
    expect((await admin(api, 'POST', `/accounts/${account.id}/rotate-secret`, undefined, { authorization: 'Bearer x' })).status).toBe(401);
  });

  it('creates an account with a whsec_ signing secret and an Open API token', async () => {
    const email = uniqueEmail();
    const created = await admin(api, 'POST', '/accounts', { email, name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      email,
      name: 'Acme',
      open_api_token: expect.any(String),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const secretBytes = Buffer.from((created.body.signing_secret as string).slice('whsec_'.length), 'base64');
    expect(secretBytes.length).toBeGreaterThanOrEqual(24);
    expect((created.body.open_api_token as string).length).toBeGreaterThanOrEqual(16);
  });

  it('creates an account with a chosen id', async () => {
    const id = randomAccountId();
    const created = await admin(api, 'POST', '/accounts', { email: uniqueEmail(), id });
    expect(created.status).toBe(201);
    expect(created.body.id).toBe(id);
    // The identity sequence moved past it: the next generated id does not collide.
    const next = await createAccount(api);
    expect(next.id).toBeGreaterThan(id);
  });

  it('refuses a duplicate email (in any letter case) with 409', async () => {
    const email = uniqueEmail();
    expect((await admin(api, 'POST', '/accounts', { email })).status).toBe(201);
    const again = await admin(api, 'POST', '/accounts', { email });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
    expect(again.body.message).toMatch(/email/);
    expect((await admin(api, 'POST', '/accounts', { email: email.toUpperCase() })).status).toBe(409);
  });

  it('refuses a duplicate id with 409 and leaves the existing account untouched', async () => {
    const id = randomAccountId();
    const firstEmail = uniqueEmail();
    const first = await admin(api, 'POST', '/accounts', { email: firstEmail, id, name: 'First' });
    expect(first.status).toBe(201);
    const again = await admin(api, 'POST', '/accounts', { email: uniqueEmail(), id, name: 'Second' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'conflict', message: 'an account with this id already exists' });
    const view = await admin(api, 'GET', `/accounts/${id}`);
    expect(view.body).toMatchObject({ id, email: firstEmail, name: 'First', previous_secret_expires_at: null });
  });

  it('refuses an invalid email with 422 naming the field', async () => {
    for (const email of ['not-an-email', '', 42]) {
      const answer = await admin(api, 'POST', '/accounts', { email });
      expect(answer.status).toBe(422);
      expect(answer.body.error).toBe('validation_failed');
      expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'email' })]));
    }
    const missing = await admin(api, 'POST', '/accounts', {});
    expect(missing.status).toBe(422);
    expect(missing.body.message).toMatch(/email/);
  });

  it('shows the account with its settings and no secrets', async () => {
    const account = await createAccount(api, { name: 'Viewer' });
    const view = await admin(api, 'GET', `/accounts/${account.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      id: account.id,
      email: account.email,
      name: 'Viewer',
      created_at: expect.any(String),
      push_url: null,
      push_content_type: 'application/x-www-form-urlencoded',
      permissions: Object.fromEntries(PERMISSION_KEYS.map((key) => [key, false])),
      ordering: 'none',
      max_per_second: null,
      redaction_fields: [],
      previous_secret_expires_at: null,
      disabled_at: null,
      disabled_reason: null,
      endpoint: null,
      lane: { waiting: 0, pace_per_second: null },
      // CONTRACT §11: the primary is listed as a destination too.
      destinations: [
        {
          id: 'primary',
          type: 'webhook',
          target: null,
          actions: null,
          filter: null,
          content_type: 'application/x-www-form-urlencoded',
          ...newDestinationDefaults(api),
        },
      ],
    });
    const text = JSON.stringify(view.body);
    expect(text).not.toContain(account.signing_secret);
    expect(text).not.toContain(account.open_api_token);
  });

  it('answers 404 for an account that does not exist and 400 for an id that cannot be one', async () => {
    expect((await admin(api, 'GET', '/accounts/2147483000')).status).toBe(404);
    expect((await admin(api, 'POST', '/accounts/2147483000/rotate-secret')).status).toBe(404);
    expect((await admin(api, 'POST', '/accounts/2147483000/endpoint/enable')).status).toBe(404);
    for (const id of ['99999999999', 'abc', '0']) {
      const answer = await admin(api, 'GET', `/accounts/${id}`);
      expect(answer.status).toBe(400);
      expect(answer.body.details).toEqual([expect.objectContaining({ path: 'id' })]);
    }
  });

  it('rotates the signing secret and shows when the previous one expires', async () => {
    const account = await createAccount(api);
    const before = Date.now();
    const rotated = await admin(api, 'POST', `/accounts/${account.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    expect(rotated.body.signing_secret).not.toBe(account.signing_secret);

    const view = await admin(api, 'GET', `/accounts/${account.id}`);
    const expiresAt = Date.parse(view.body.previous_secret_expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 5_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 5_000);
    expect(JSON.stringify(view.body)).not.toContain(rotated.body.signing_secret as string);
  });
});
