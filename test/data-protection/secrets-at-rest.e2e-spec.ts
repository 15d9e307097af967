import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { runMigrations } from '@app/persistence/testing';
import { readSecretsKeys, SecretBox } from '@app/runtime';
import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { spawnBuiltApp } from '../support/built-app';
import { ADMIN_HEADERS, createAccount } from '../support/fixtures';
import { dropDatabase } from '../support/worker-databases';
import { useOwnRedisPrefix } from '../support/worker-process';

/**
 * Secrets at rest: what PostgreSQL holds after every way a secret is written, plaintext rows of an
 * upgraded installation, `npm run secrets:rotate` (the built scripts/secrets.js) and the refusal to start
 * without a key. The rotation runs on a database of its own: it re-seals every row, and the other suites
 * of the run keep using the run's key.
 */
useOwnRedisPrefix('secrets-at-rest');
jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');
const runKey = process.env.SECRETS_KEY ?? '';
const newKey = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;

async function signedRead(app: RunningApp, email: string, openApiToken: string): Promise<number> {
  const query = new URLSearchParams(openApiQuery({ email, openApiToken }));
  return (await fetch(`${app.url}/open_api_v1/push_settings?${query.toString()}`)).status;
}

/** Every row of the account that may hold a secret: the account, its bot webhooks and its destinations (the primary's signing secrets included). */
async function rowsAsText(client: Client, accountId: number): Promise<string> {
  const { rows } = await client.query<{ row: string }>(
    `SELECT row_to_json(a)::text AS row FROM accounts a WHERE id = $1
     UNION ALL SELECT row_to_json(b)::text FROM bot_webhooks b WHERE account_id = $1
     UNION ALL SELECT row_to_json(d)::text FROM destinations d WHERE account_id = $1`,
    [accountId],
  );
  return rows.map((each) => each.row).join('\n');
}

/** The account's token, its signing secrets (on its primary destination) and its bot webhook keys, as stored. */
async function secretColumns(client: Client, accountId: number): Promise<(string | null)[]> {
  const account = await client.query<Record<string, string | null>>(
    `SELECT a.open_api_token, p.signing_secret, p.previous_signing_secret
       FROM accounts a JOIN destinations p ON p.account_id = a.id AND p.id = 'primary' WHERE a.id = $1`,
    [accountId],
  );
  const webhooks = await client.query<{ key: string }>('SELECT key FROM bot_webhooks WHERE account_id = $1', [accountId]);
  return [...Object.values(account.rows[0] ?? {}), ...webhooks.rows.map((row) => row.key)];
}

function rotateCommand(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [join(ROOT, 'dist', 'scripts', 'secrets.js'), 'rotate'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
  );
}

describe('what PostgreSQL holds', () => {
  let configApi: RunningApp;
  let client: Client;

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await configApi?.close();
  });

  it('holds no plaintext secret after creating an account, rotating its secret and token, and adding a bot webhook', async () => {
    const account = await createAccount(configApi);
    const post = async (path: string, body?: unknown): Promise<Record<string, string>> => {
      const response = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}${path}`, {
        method: 'POST',
        headers: ADMIN_HEADERS,
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(response.status).toBeLessThan(300);
      return (await response.json()) as Record<string, string>;
    };
    const { signing_secret: newSecret } = await post('/rotate-secret');
    const { open_api_token: newToken } = await post('/rotate-token');
    const botKey = `bot-key-${randomBytes(12).toString('hex')}`;
    await post('/bot-webhooks', { name: 'faq', type: 'task_push', url: 'https://bot.example.com/push', key: botKey });

    const stored = await rowsAsText(client, account.id);
    const plaintexts = [account.open_api_token, account.signing_secret, newSecret, newToken, botKey];
    // The base64 part alone too: a secret stored without its whsec_ prefix is still a plaintext secret.
    for (const secret of [...plaintexts, ...[account.signing_secret, newSecret].map((value) => value.replace(/^whsec_/, ''))]) {
      expect(stored).not.toContain(secret);
    }
    const columns = await secretColumns(client, account.id);
    expect(columns).toHaveLength(4);
    const currentKeyId = runKey.slice(0, runKey.indexOf(':'));
    for (const column of columns) expect(column).toMatch(new RegExp(`^gcm1:${currentKeyId}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$`));

    // And what is sealed is what the apps use: the new token signs, the old one does not.
    expect(await signedRead(configApi, account.email, newToken)).toBe(200);
    expect(await signedRead(configApi, account.email, account.open_api_token)).toBe(401);
  });
});

describe('an upgraded installation and npm run secrets:rotate', () => {
  const databaseUrl = (() => {
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.pathname = `${url.pathname}_secrets`;
    return url.toString();
  })();
  const secondKey = newKey('second');
  let client: Client;
  const legacy = {
    email: `legacy-${process.pid}@example.com`,
    token: `legacy-token-${randomBytes(12).toString('hex')}`,
    secret: `whsec_${randomBytes(24).toString('base64')}`,
    previous: `whsec_${randomBytes(24).toString('base64')}`,
    botKey: `legacy-bot-key-${randomBytes(12).toString('hex')}`,
  };
  const legacySecrets = [legacy.token, legacy.secret, legacy.previous, legacy.botKey];
  const sealed = { email: `sealed-${process.pid}@example.com`, token: `sealed-token-${randomBytes(12).toString('hex')}` };
  const ids: Record<'legacy' | 'sealed', number> = { legacy: 0, sealed: 0 };
  const destinationKey = `destination-key-${randomBytes(12).toString('hex')}`;
  /** The account's primary destination as every account has it: no push URL yet, its signing secrets as given. */
  const insertPrimary = (accountId: number, signingSecret: string, previous: string | null): Promise<unknown> =>
    client.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, signing_secret, previous_signing_secret, previous_secret_expires_at)
       VALUES ('primary', $1, 'webhook', NULL, NULL, 'application/x-www-form-urlencoded', 'udesk', $2, $3, CASE WHEN $3::text IS NULL THEN NULL ELSE now() + interval '1 hour' END)`,
      [accountId, signingSecret, previous],
    );

  beforeAll(async () => {
    await runMigrations(databaseUrl);
    client = new Client({ connectionString: databaseUrl });
    await client.connect();
    // As an installation from before encryption holds them: plaintext (the signing secrets on the
    // account's primary destination, where the delivery model's migration moved them).
    const legacyRow = await client.query<{ id: number }>('INSERT INTO accounts (email, open_api_token) VALUES ($1, $2) RETURNING id', [legacy.email, legacy.token]);
    ids.legacy = legacyRow.rows[0].id;
    await insertPrimary(ids.legacy, legacy.secret, legacy.previous);
    await client.query(`INSERT INTO bot_webhooks (account_id, name, type, url, key) VALUES ($1, 'faq', 'task_push', 'https://bot.example.com/push', $2)`, [
      ids.legacy,
      legacy.botKey,
    ]);
    // And one written by this version, under the run's key.
    const runBox = new SecretBox(readSecretsKeys({ SECRETS_KEY: runKey }, false, []));
    const sealedRow = await client.query<{ id: number }>('INSERT INTO accounts (email, open_api_token) VALUES ($1, $2) RETURNING id', [sealed.email, runBox.seal(sealed.token)]);
    ids.sealed = sealedRow.rows[0].id;
    await insertPrimary(ids.sealed, runBox.seal(`whsec_${randomBytes(24).toString('base64')}`), null);
    // An extra destination (CONTRACT §11): its target, auth and signing secret are sealed like the others.
    await client.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, auth, auth_type, signing_secret)
       VALUES ($1, $2, 'webhook', $3, 'https://hooks.example.com/a', $4, 'header', $5)`,
      [
        `dst_${randomBytes(12).toString('hex')}`,
        ids.sealed,
        runBox.seal('https://hooks.example.com/a'),
        runBox.seal(JSON.stringify({ type: 'header', name: 'x-api-key', value: destinationKey })),
        runBox.seal(`whsec_${randomBytes(24).toString('base64')}`),
      ],
    );
    for (const id of Object.values(ids)) await client.query('INSERT INTO callback_settings (account_id, permissions) VALUES ($1, $2::jsonb)', [id, '{}']);
  });

  afterAll(async () => {
    await client?.end();
    await dropDatabase(databaseUrl);
  });

  it('reads plaintext rows as they are until they are sealed', async () => {
    const configApi = await startApp(ConfigApiModule, { DATABASE_URL: databaseUrl });
    try {
      expect(await signedRead(configApi, legacy.email, legacy.token)).toBe(200);
      expect(await signedRead(configApi, sealed.email, sealed.token)).toBe(200);
    } finally {
      await configApi.close();
    }
  });

  it('seals the plaintext rows and moves every value to the new key; a second run finds nothing to do', async () => {
    const first = await rotateCommand({ DATABASE_URL: databaseUrl, SECRETS_KEY: secondKey, SECRETS_PREVIOUS_KEYS: runKey });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    // The same nine values as before the delivery model, counted by the table that holds them now: the two
    // tokens; the bot key; the extra destination's three credentials and the three signing secrets of the primaries.
    expect(first.stdout).toContain('sealed 2 account secret(s), 1 bot webhook key(s) and 6 destination credential(s) with key "second"');
    const [destination] = (
      await client.query<{ target: string; auth: string; signing_secret: string }>(`SELECT target, auth, signing_secret FROM destinations WHERE account_id = $1 AND id <> 'primary'`, [ids.sealed])
    ).rows;
    for (const column of Object.values(destination)) expect(column.startsWith('gcm1:second:')).toBe(true);

    const secondBox = new SecretBox(readSecretsKeys({ SECRETS_KEY: secondKey }, false, []));
    const legacyColumns = await secretColumns(client, ids.legacy);
    expect(legacyColumns.map((value) => secondBox.open(value ?? ''))).toEqual(legacySecrets);
    for (const id of Object.values(ids)) {
      const stored = await rowsAsText(client, id);
      for (const secret of [...legacySecrets, sealed.token]) expect(stored).not.toContain(secret);
      for (const column of await secretColumns(client, id)) if (column !== null) expect(column.startsWith('gcm1:second:')).toBe(true);
    }

    const again = await rotateCommand({ DATABASE_URL: databaseUrl, SECRETS_KEY: secondKey, SECRETS_PREVIOUS_KEYS: runKey });
    expect(again.stdout).toContain('sealed 0 account secret(s), 0 bot webhook key(s) and 0 destination credential(s)');

    // The old key is no longer needed by the apps.
    const configApi = await startApp(ConfigApiModule, { DATABASE_URL: databaseUrl, SECRETS_KEY: secondKey, SECRETS_PREVIOUS_KEYS: '' });
    try {
      expect(await signedRead(configApi, legacy.email, legacy.token)).toBe(200);
      expect(await signedRead(configApi, sealed.email, sealed.token)).toBe(200);
    } finally {
      await configApi.close();
    }
  });

  it('stops at a value sealed with a key it was not given, naming the row and key id but neither the value nor its plaintext', async () => {
    const stored = (await secretColumns(client, ids.legacy)).filter((value): value is string => value !== null);
    const failed = await rotateCommand({ DATABASE_URL: databaseUrl, SECRETS_KEY: newKey('third') });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^secrets: failed: accounts \d+ open_api_token: a secret is sealed with key id "second", which is neither SECRETS_KEY nor in SECRETS_PREVIOUS_KEYS\n$/);
    for (const secret of [...stored, ...stored.map((value) => value.split(':')[3]), ...legacySecrets]) {
      expect(failed.stderr + failed.stdout).not.toContain(secret);
    }
    // Nothing was changed by the failed run.
    expect(await secretColumns(client, ids.legacy)).toEqual(expect.arrayContaining(stored));
  });

  it('refuses to run without SECRETS_KEY, naming it', async () => {
    const failed = await rotateCommand({ DATABASE_URL: databaseUrl });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('SECRETS_KEY is required');
  });
});

describe('starting without SECRETS_KEY', () => {
  it('is refused in production with a message naming SECRETS_KEY', async () => {
    const running = spawnBuiltApp('config-api', { NODE_ENV: 'production', SECRETS_KEY: '' });
    const { how } = await running.exited;
    expect(how).toBe(1);
    expect(running.output()).toContain('SECRETS_KEY is required when NODE_ENV=production');
  });

  it('is refused outside production too, saying how to get a key', async () => {
    const running = spawnBuiltApp('ingest', { SECRETS_KEY: '' });
    const { how } = await running.exited;
    expect(how).toBe(1);
    expect(running.output()).toContain('[ingest] SECRETS_KEY is not set');
    expect(running.output()).toContain('npm run secrets:new-key');
  });

  it('names a malformed SECRETS_KEY without echoing it', async () => {
    const material = randomBytes(16).toString('base64');
    const running = spawnBuiltApp('delivery-worker', { SECRETS_KEY: `k1:${material}` });
    const { how } = await running.exited;
    expect(how).toBe(1);
    expect(running.output()).toContain('SECRETS_KEY: the key "k1" must be the base64 of exactly 32 bytes');
    expect(running.output()).not.toContain(material);
  });
});
