import type { ServerResponse } from 'node:http';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS } from '../support/fixtures';
import { TestReceiver, useReceivers } from '../support/receiver';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function send(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const answer = (content: string) => (_request: unknown, response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answerContent: content }));
};

/**
 * Bot webhook changes made through config-api take effect in every ingest process with the very next
 * call, not after a cache expires: two ingest instances, each having used the webhook just before.
 */
describe('bot webhook changes reach every ingest process at once', () => {
  let configApi: RunningApp;
  let ingests: RunningApp[];
  const started = useReceivers();

  beforeAll(async () => {
    [configApi, ...ingests] = await Promise.all([startApp(ConfigApiModule), startApp(IngestModule), startApp(IngestModule)]);
  });

  afterAll(async () => {
    await Promise.all([configApi?.close(), ...(ingests ?? []).map((ingest) => ingest.close())]);
  });

  const receiver = (content: string): Promise<TestReceiver> => started((fresh) => fresh.respondWith(answer(content)));

  const admin = (method: string, path: string, body?: unknown) => send(method, `${configApi.url}/admin/v1${path}`, ADMIN_HEADERS, body);
  const trigger = (ingest: RunningApp, accountId: number, name: string) =>
    send('POST', `${ingest.url}/v1/bot/message-trigger`, INGEST_HEADERS, {
      account_id: accountId,
      integration_name: name,
      regex: 'r',
      questionContent: 'q',
    });

  async function create(accountId: number, name: string, url: string): Promise<number> {
    const created = await admin('POST', `/accounts/${accountId}/bot-webhooks`, { name, type: 'message_trigger', url, key: 'key-0123' });
    expect(created.status).toBe(201);
    return created.body.id as number;
  }

  it.each([0, 1])('relays nothing once a webhook is deleted (next call through ingest %i)', async (first) => {
    const account = await createAccount(configApi);
    const hook = await receiver('from the webhook');
    const id = await create(account.id, 'faq', hook.url);
    // Both instances have looked the webhook up (and cached it).
    for (const ingest of ingests) expect(await trigger(ingest, account.id, 'faq')).toEqual({ status: 200, body: { answerContent: 'from the webhook' } });
    expect(hook.requests).toHaveLength(2);

    expect((await admin('DELETE', `/accounts/${account.id}/bot-webhooks/${id}`)).status).toBe(204);
    const next = await trigger(ingests[first], account.id, 'faq');
    expect(next).toEqual({
      status: 404,
      body: { error: 'not_found', message: `account ${account.id} has no message_trigger bot webhook named "faq"` },
    });
    expect((await trigger(ingests[1 - first], account.id, 'faq')).status).toBe(404);
    expect(hook.requests).toHaveLength(2);
  });

  it('uses a webhook created after a lookup found none, and the new one after a replacement', async () => {
    const account = await createAccount(configApi);
    // Cached as "no such webhook" in both instances.
    for (const ingest of ingests) expect((await trigger(ingest, account.id, 'orders')).status).toBe(404);

    const before = await receiver('before');
    const id = await create(account.id, 'orders', before.url);
    for (const ingest of ingests) expect((await trigger(ingest, account.id, 'orders')).body).toEqual({ answerContent: 'before' });

    const after = await receiver('after');
    expect((await admin('DELETE', `/accounts/${account.id}/bot-webhooks/${id}`)).status).toBe(204);
    await create(account.id, 'orders', after.url);
    for (const ingest of ingests) expect((await trigger(ingest, account.id, 'orders')).body).toEqual({ answerContent: 'after' });
    expect(before.requests).toHaveLength(2);
    expect(after.requests).toHaveLength(2);
  });

  it('asks PostgreSQL on every call while the change stamps cannot be read', async () => {
    // An ingest whose Redis is a closed port: it cannot know whether a cached lookup is still current.
    const blind = await startApp(IngestModule, { REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const account = await createAccount(configApi);
      const hook = await receiver('from the webhook');
      const id = await create(account.id, 'faq', hook.url);
      expect((await trigger(blind, account.id, 'faq')).status).toBe(200);
      expect((await admin('DELETE', `/accounts/${account.id}/bot-webhooks/${id}`)).status).toBe(204);
      expect((await trigger(blind, account.id, 'faq')).status).toBe(404);
      expect(hook.requests).toHaveLength(1);
    } finally {
      await blind.close();
    }
  });
});
