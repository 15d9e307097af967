import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import type { Json } from './support/admin-client';
import { type RunningApp, startApp } from './support/apps';
import { createAccount, type TestAccount } from './support/fixtures';
import { fetchFrom, signedOpenApiCall } from './support/open-api-client';

/**
 * CONTRACT §2 against hostile API users: the failed-authentication limit per (email, client address),
 * and set_url refusals that tell nothing about what a name resolves to.
 */
let configApi: RunningApp;
/** Private targets refused, as in production. */
let strictApi: RunningApp;

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  strictApi = await startApp(ConfigApiModule, { ALLOW_PRIVATE_TARGETS: 'false' });
});

afterAll(async () => {
  await strictApi?.close();
  await configApi?.close();
});

/** The signed query of an account; `token` overrides its token (a wrong one fails with 2059). */
function signedQuery(account: TestAccount, token = account.open_api_token): string {
  return new URLSearchParams(openApiQuery({ email: account.email, openApiToken: token })).toString();
}

/** One query for each kind of failed authentication. */
const FAILING_QUERIES: ((account: TestAccount) => string)[] = [
  (account) => signedQuery(account, 'wrong-token'), // 2059
  (account) => `${signedQuery(account)}&timestamp=soon`, // 20621: a repeated timestamp is no integer
  (account) => `email=${encodeURIComponent(account.email)}&sign_version=v2&timestamp=1&sign=x`, // 20624: no nonce
];

/** GET /push_settings with `query`, from `localAddress`. */
async function pushSettingsFrom(localAddress: string, query: string): Promise<{ status: number; body: Json }> {
  const response = await fetchFrom(localAddress, `${configApi.url}/open_api_v1/push_settings?${query}`);
  return { status: response.status, body: (await response.json()) as Json };
}

describe('failed authentications', () => {
  it('refuses an email from one address after 20 failures in a minute, and nobody else', async () => {
    const [target, bystander] = [await createAccount(configApi), await createAccount(configApi)];
    const codes: number[] = [];
    for (let attempt = 0; attempt < 20; attempt += 1) {
      codes.push((await pushSettingsFrom('127.0.0.1', FAILING_QUERIES[attempt % FAILING_QUERIES.length](target))).body.code);
    }
    expect(new Set(codes)).toEqual(new Set([2059, 20621, 20624]));

    const refused = await pushSettingsFrom('127.0.0.1', signedQuery(target));
    expect([refused.status, refused.body.code]).toEqual([429, 2000]);
    expect(refused.body.exception.message).toMatch(/failed authentications/);
    // Another address for that email, and another email from that address, are not affected.
    expect((await pushSettingsFrom('127.0.0.2', signedQuery(target))).status).toBe(200);
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(bystander))).status).toBe(200);
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(target))).status).toBe(429);
  });

  it('lets a caller that fails less than the limit keep calling', async () => {
    const account = await createAccount(configApi);
    for (let attempt = 0; attempt < 19; attempt += 1) expect((await pushSettingsFrom('127.0.0.1', signedQuery(account, 'wrong'))).status).toBe(401);
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(account))).status).toBe(200);
  });
});

describe('set_url refusals for the target', () => {
  it('answer one message, naming no address, whatever the reason', async () => {
    const account = await createAccount(strictApi);
    const messages = new Set<string>();
    for (const pushUrl of ['http://localhost:8080/hook', 'http://[::127.0.0.1]/hook', 'http://[::ffff:10.0.0.1]/', 'http://10.0.0.5/', 'http://no-such-host.invalid/hook']) {
      const answer = await signedOpenApiCall(strictApi, account, 'set_url', { push_url: pushUrl });
      expect({ pushUrl, status: answer.status, code: answer.body.code }).toEqual({ pushUrl, status: 400, code: 2000 });
      messages.add(answer.body.exception.message as string);
    }
    expect([...messages]).toEqual(['push_url points to a non-public address or to a host that does not resolve']);
  });
});
