import { randomBytes } from 'node:crypto';
import { openApiQuery } from '@app/signing';
import { type BuiltAppProcess, jsonLogLines, spawnBuiltApp } from '../support/built-app';
import type { Json } from '../support/admin-client';
import { ADMIN_HEADERS, INGEST_HEADERS, type TestAccount } from '../support/fixtures';
import { freePort } from '@app/testing';
import { IsolatedNamespace } from '../support/isolated-namespace';

/**
 * Secrets never reach the logs (CONTRACT §1, issue 16): the built config-api and ingest run as processes
 * whose every output line is kept; each error path is provoked with secrets in it (fresh tokens and
 * signing secrets, bot webhook keys, push URLs), including statements PostgreSQL refuses with the
 * secret in its own error message; then no captured line may hold any of them.
 */
jest.setTimeout(120_000);

const namespace = new IsolatedNamespace('log-secrets');
const apps: { configApi?: BuiltAppProcess; ingest?: BuiltAppProcess } = {};
let configApiUrl = '';
let ingestUrl = '';
const secrets: string[] = [];

/** A secret-looking value of its own per use, recorded to be looked for in the logs. */
function secret(label: string): string {
  const value = `${label}-${randomBytes(9).toString('hex')}`;
  secrets.push(value);
  return value;
}

async function send(method: string, url: string, body?: unknown, headers: Record<string, string> = ADMIN_HEADERS): Promise<{ status: number; body: Json }> {
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Json) : {} };
}

function openApi(account: TestAccount, operation: string, body?: unknown, token = account.open_api_token): Promise<{ status: number; body: Json }> {
  const query = new URLSearchParams(openApiQuery({ email: account.email, openApiToken: token })).toString();
  return send(body === undefined ? 'GET' : 'POST', `${configApiUrl}/open_api_v1/${operation}?${query}`, body, { 'content-type': 'application/json' });
}

beforeAll(async () => {
  await namespace.setUp();
  // PostgreSQL itself refuses these writes with the secret in its message, as a constraint or a bad value would.
  await namespace.db.query(`
    CREATE FUNCTION refuse_key() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.name = 'explode' THEN RAISE EXCEPTION 'refused key %', NEW.key; END IF;
      RETURN NEW;
    END $$;
    CREATE FUNCTION refuse_push_url() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id = 'primary' AND NEW.target_shown LIKE '%explode%' THEN RAISE EXCEPTION 'refused url %', NEW.target_shown; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_bot_webhook BEFORE INSERT ON bot_webhooks FOR EACH ROW EXECUTE FUNCTION refuse_key();
    CREATE TRIGGER refuse_push_url BEFORE UPDATE ON destinations FOR EACH ROW EXECUTE FUNCTION refuse_push_url();`);
  const [configApiPort, ingestPort] = [await freePort(), await freePort()];
  const settings = { ...namespace.overrides, LISTEN_HOST: '127.0.0.1', LOG_LEVEL: 'debug' };
  apps.configApi = spawnBuiltApp('config-api', { ...settings, CONFIG_API_PORT: String(configApiPort) });
  apps.ingest = spawnBuiltApp('ingest', { ...settings, INGEST_PORT: String(ingestPort) });
  await apps.configApi.waitForOutput(`listening on http://127.0.0.1:${configApiPort}`);
  await apps.ingest.waitForOutput(`listening on http://127.0.0.1:${ingestPort}`);
  configApiUrl = `http://127.0.0.1:${configApiPort}`;
  ingestUrl = `http://127.0.0.1:${ingestPort}`;
});

afterAll(async () => {
  await apps.ingest?.terminate(10_000);
  await apps.configApi?.terminate(10_000);
  await namespace.tearDown();
});

it('logs no secret on any error path', async () => {
  const created = await send('POST', `${configApiUrl}/admin/v1/accounts`, { email: `${secret('owner')}@example.com`, name: 'logs' });
  expect(created.status).toBe(201);
  const account = created.body as TestAccount;
  secrets.push(account.open_api_token, account.signing_secret, account.signing_secret.slice('whsec_'.length));
  const webhooks = `${configApiUrl}/admin/v1/accounts/${account.id}/bot-webhooks`;

  const statuses: Record<string, number> = {};
  const provoke = async (label: string, call: Promise<{ status: number }>): Promise<void> => {
    statuses[label] = (await call).status;
  };
  await provoke('bot webhook', send('POST', webhooks, { name: 'faq', type: 'message_trigger', url: 'http://127.0.0.1:9/bot', key: secret('key') }));
  await provoke('bot webhook again', send('POST', webhooks, { name: 'faq', type: 'message_trigger', url: 'http://127.0.0.1:9/bot', key: secret('key') }));
  await provoke('bot webhook refused by PostgreSQL', send('POST', webhooks, { name: 'explode', type: 'task_push', url: 'http://127.0.0.1:9/x', key: secret('key') }));
  await provoke('bot webhook NUL key', send('POST', webhooks, { name: 'nul', type: 'task_push', url: 'http://127.0.0.1:9/x', key: `${secret('key')}\u0000` }));
  await provoke('bot webhook NUL url', send('POST', webhooks, { name: 'nul2', type: 'task_push', url: `http://127.0.0.1:9/${secret('url')}\u0000`, key: secret('key') }));
  await provoke('account NUL name', send('POST', `${configApiUrl}/admin/v1/accounts`, { email: `${secret('nul')}@example.com`, name: 'a\u0000' }));
  await provoke('account duplicate', send('POST', `${configApiUrl}/admin/v1/accounts`, { email: account.email }));
  await provoke('set_url', openApi(account, 'set_url', { push_url: `http://127.0.0.1:9/hook?token=${secret('push')}` }));
  await provoke('set_url refused by PostgreSQL', openApi(account, 'set_url', { push_url: `http://127.0.0.1:9/explode?token=${secret('push')}` }));
  await provoke('set_url NUL', openApi(account, 'set_url', { push_url: `http://127.0.0.1:9/?token=${secret('push')}\u0000` }));
  await provoke('wrong sign', openApi(account, 'push_settings', undefined, secret('token')));
  await provoke('events far dates', send('GET', `${configApiUrl}/admin/v1/events?until=2300-01-01&since=0001-01-01`));
  await provoke('events huge cursor', send('GET', `${configApiUrl}/admin/v1/events?cursor=${Buffer.from('v1:9999999999999999999').toString('base64url')}`));
  await provoke('bot calls week date', send('GET', `${configApiUrl}/admin/v1/bot-calls?since=2020-W01`));
  await provoke('event NUL', send('POST', `${ingestUrl}/v1/events`, { account_id: account.id, action: 'Customer_destroy', message: { id: 1, note: `${secret('msg')}\u0000` } }, INGEST_HEADERS));
  await provoke('bot call refused port', send('POST', `${ingestUrl}/v1/bot/message-trigger`, { account_id: account.id, integration_name: 'faq', regex: 'r', questionContent: secret('question') }, INGEST_HEADERS));
  await provoke('ingest wrong token', send('POST', `${ingestUrl}/v1/events`, { token: secret('body') }, { 'content-type': 'application/json', authorization: `Bearer ${secret('bearer')}` }));

  expect(statuses).toEqual({
    'bot webhook': 201,
    'bot webhook again': 409,
    'bot webhook refused by PostgreSQL': 500,
    'bot webhook NUL key': 422,
    'bot webhook NUL url': 422,
    'account NUL name': 422,
    'account duplicate': 409,
    set_url: 200,
    'set_url refused by PostgreSQL': 500,
    'set_url NUL': 400,
    'wrong sign': 401,
    'events far dates': 200,
    'events huge cursor': 400,
    'bot calls week date': 400,
    'event NUL': 422,
    'bot call refused port': 502,
    'ingest wrong token': 401,
  });

  // Nothing logged holds a secret, whatever the error.
  await apps.configApi?.waitForOutput('"sqlstate":"P0001"');
  const output = `${apps.configApi?.output() ?? ''}\n${apps.ingest?.output() ?? ''}`;
  const leaked = secrets.filter((value) => output.includes(value));
  expect(leaked).toEqual([]);

  // Each unhandled error's line names its request, whose own log line is the 500 answer.
  const lines = jsonLogLines(output);
  const errors = lines.filter((line) => line.msg === 'unhandled error');
  expect(errors).toHaveLength(2);
  for (const error of errors) {
    const answers = lines.filter((line) => line.req?.id === error.requestId && line.res !== undefined);
    expect(error.requestId).toEqual(expect.any(Number));
    expect(answers.map((line) => line.res?.statusCode)).toContain(500);
  }

  // The refused statements were logged by SQLSTATE and statement name.
  const refused = [...output.matchAll(/"database_error":\{"sqlstate":"P0001"(?:,"statement":"([^"]*)")?\}/g)].map((match) => match[1] ?? null);
  expect(refused).toContain('INSERT bot_webhooks');
  // set_url's refusal, named like every logged database error: its statement writes the push URL to the
  // account's primary destination row (a statement with a CTE names its verb WITH).
  expect(refused.filter((name) => name !== 'INSERT bot_webhooks')).toEqual(['WITH destinations']);
});
