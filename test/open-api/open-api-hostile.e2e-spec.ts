import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import type { Json } from '../support/admin-client';
import { type RunningApp, useApps } from '../support/apps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { fetchFrom, signedOpenApiCall } from '../support/open-api-client';

/**
 * CONTRACT §2 against hostile API users: the failed-authentication limit per (email, client address),
 * and set_url refusals that tell nothing about what a name resolves to.
 */
const { configApi, proxiedApi, strictApi } = useApps({
  configApi: ConfigApiModule,
  /** Behind one proxy hop (TRUST_PROXY=1). */
  proxiedApi: [ConfigApiModule, { TRUST_PROXY: '1' }],
  /**
   * Private targets refused, as in production; 8.8.8.0/24 refused too, as BLOCKED_TARGET_RANGES. Last: the
   * target guard's ranges are the process's, and each app sets them as it starts.
   */
  strictApi: [ConfigApiModule, { ALLOW_PRIVATE_TARGETS: 'false', BLOCKED_TARGET_RANGES: '8.8.8.0/24, 2001:4860::/32' }],
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

/** `operation` (push_settings by default) with `query`, from `localAddress`, on `app`. */
async function pushSettingsFrom(
  localAddress: string,
  query: string,
  { app = configApi, operation = 'push_settings', headers }: { app?: RunningApp; operation?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Json }> {
  const response = await fetchFrom(localAddress, `${app.url}/open_api_v1/${operation}?${query}`, { headers });
  return { status: response.status, body: (await response.json()) as Json };
}

/** Twenty failing calls for the account's email, cycling through the kinds of failure; their codes. */
async function failTwentyTimes(account: TestAccount, send: (query: string) => Promise<{ body: Json }>): Promise<Set<number>> {
  const codes = new Set<number>();
  for (let attempt = 0; attempt < 20; attempt += 1) codes.add((await send(FAILING_QUERIES[attempt % FAILING_QUERIES.length](account))).body.code as number);
  return codes;
}

describe('failed authentications', () => {
  it.each(['push_settings', 'events'])('refuse further failing calls for an email from one address after 20 in a minute on %s, never a correct one', async (operation) => {
    const [target, bystander] = [await createAccount(configApi), await createAccount(configApi)];
    expect(await failTwentyTimes(target, (query) => pushSettingsFrom('127.0.0.1', query, { operation }))).toEqual(new Set([2059, 20621, 20624]));

    const refused = await pushSettingsFrom('127.0.0.1', signedQuery(target, 'wrong-token'), { operation });
    expect([refused.status, refused.body.code]).toEqual([429, 2000]);
    expect(refused.body.exception.message).toMatch(/failed authentications/);
    // The owner, signing correctly from that very address, is not locked out.
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(target), { operation })).status).toBe(200);
    // Another address for that email, and another email from that address, are not affected.
    expect((await pushSettingsFrom('127.0.0.2', signedQuery(target, 'wrong-token'), { operation })).status).toBe(401);
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(bystander, 'wrong-token'), { operation })).status).toBe(401);
    expect((await pushSettingsFrom('127.0.0.1', signedQuery(target, 'wrong-token'), { operation })).status).toBe(429);
  });

  it('counts by the forwarded address behind TRUST_PROXY, and by the socket without it', async () => {
    const account = await createAccount(proxiedApi);
    const via = (client: string) => (query: string) => pushSettingsFrom('127.0.0.1', query, { app: proxiedApi, headers: { 'x-forwarded-for': `198.51.100.77, ${client}` } });
    await failTwentyTimes(account, via('203.0.113.1'));
    expect((await via('203.0.113.1')(signedQuery(account, 'wrong'))).status).toBe(429);
    // Same socket, another forwarded client: its own count. The left entry (the client's own claim) is not believed.
    expect((await via('203.0.113.2')(signedQuery(account, 'wrong'))).status).toBe(401);

    // Without TRUST_PROXY the header is ignored: every forwarded name is the one socket address.
    const direct = await createAccount(configApi);
    let forwarded = 0;
    const spoofing = (query: string) => pushSettingsFrom('127.0.0.3', query, { headers: { 'x-forwarded-for': `203.0.113.${(forwarded += 1)}` } });
    await failTwentyTimes(direct, spoofing);
    expect((await spoofing(signedQuery(direct, 'wrong'))).status).toBe(429);
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

  it('refuse an address inside BLOCKED_TARGET_RANGES as they refuse a private one', async () => {
    const account = await createAccount(strictApi);
    for (const pushUrl of ['http://8.8.8.8/hook', 'http://[2001:4860::8888]/hook', 'http://[::ffff:8.8.8.9]/hook']) {
      const answer = await signedOpenApiCall(strictApi, account, 'set_url', { push_url: pushUrl });
      expect({ pushUrl, status: answer.status, message: answer.body.exception.message }).toEqual({
        pushUrl,
        status: 400,
        message: 'push_url points to a non-public address or to a host that does not resolve',
      });
    }
    expect((await signedOpenApiCall(strictApi, account, 'set_url', { push_url: 'http://8.8.4.4/hook' })).status).toBe(200);
  });
});
