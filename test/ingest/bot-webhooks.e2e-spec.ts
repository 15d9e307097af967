import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MSG_TYPES, SAMPLE_TASK_PUSH_ANSWERS } from '@app/payloads';
import { messageTriggerSign, taskPushSign, verifyMessageTriggerRequest, verifyTaskPushRequest } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { BOT_MAX_IN_FLIGHT_PER_ORIGIN } from '../../apps/ingest/src/bot/bot-http.client';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { createBotWebhookServer } from '../../examples/bot-webhook/bot-webhook.server';
import { type RunningApp, startApp, useApps } from '../support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS } from '../support/fixtures';
import { TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';

/** The JSON bodies these endpoints answer with, loosely: each test reads the fields it asserts. */
interface ReplyBody {
  error?: string;
  message?: string;
  details?: Array<{ path: string; problem: string }>;
  items?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

interface Reply {
  status: number;
  body: ReplyBody;
  text: string;
}

interface WebhookView {
  id: number;
  timeout_ms: number;
}

interface BotCallItem {
  id: string;
  account_id: number;
  bot_webhook_id: number | null;
  type: string;
  integration_name: string;
  url: string | null;
  request_body: string;
  response_status: number | null;
  response_body: string;
  answer: unknown;
  outcome: string;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

interface BotCallsPage {
  items: BotCallItem[];
  next_cursor: string | null;
}

async function send(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: ReplyBody = {};
  try {
    parsed = text ? (JSON.parse(text) as ReplyBody) : {};
  } catch {
    parsed = {};
  }
  return { status: response.status, body: parsed, text };
}

const json = (status: number, body: unknown) => (_request: unknown, response: import('node:http').ServerResponse) => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** Never answers: the request stays open until the service gives up or the receiver stops. */
const hang = (): void => undefined;

describe('bot webhooks', () => {
  const { configApi, ingest } = useApps({ configApi: ConfigApiModule, ingest: IngestModule });
  const started = useReceivers();

  const receiver = (responder: Parameters<TestReceiver['respondWith']>[0], path = '/hook'): Promise<TestReceiver> => started((fresh) => fresh.respondWith(responder), path);

  const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = ADMIN_HEADERS) =>
    send(method, `${configApi.url}${path}`, headers, body);

  async function createWebhook(accountId: number, fields: Record<string, unknown>): Promise<WebhookView> {
    const reply = await admin('POST', `/admin/v1/accounts/${accountId}/bot-webhooks`, fields);
    if (reply.status !== 201) throw new Error(`creating a bot webhook answered ${reply.status}: ${reply.text}`);
    return reply.body as unknown as WebhookView;
  }

  const messageTrigger = (body: Record<string, unknown>, app: RunningApp = ingest) =>
    send('POST', `${app.url}/v1/bot/message-trigger`, INGEST_HEADERS, body);
  const taskPush = (body: Record<string, unknown>, app: RunningApp = ingest) => send('POST', `${app.url}/v1/bot/task-push`, INGEST_HEADERS, body);

  async function botCalls(query: Record<string, string | number>): Promise<BotCallsPage> {
    const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]));
    const reply = await admin('GET', `/admin/v1/bot-calls?${search.toString()}`);
    if (reply.status !== 200) throw new Error(`listing bot calls answered ${reply.status}: ${reply.text}`);
    return reply.body as unknown as BotCallsPage;
  }

  /** Calls are recorded just after the bot is answered, so the log is polled. */
  const waitForCalls = (accountId: number, count: number, extra: Record<string, string | number> = {}) =>
    waitFor(`${count} recorded bot calls for account ${accountId}`, async () => {
      const page = await botCalls({ account_id: accountId, ...extra });
      return page.items.length >= count ? page.items : undefined;
    });

  describe('admin API', () => {
    it('creates, lists and deletes bot webhooks without ever showing the key', async () => {
      const account = await createAccount(configApi);
      const key = 'secret-key-never-shown-1234';
      const created = await admin('POST', `/admin/v1/accounts/${account.id}/bot-webhooks`, {
        name: 'faq',
        type: 'message_trigger',
        url: 'https://bot.example.com/faq',
        key,
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        account_id: account.id,
        name: 'faq',
        type: 'message_trigger',
        url: 'https://bot.example.com/faq',
        timeout_ms: 5000,
        created_at: expect.any(String),
      });
      expect(created.text).not.toContain(key);

      const sameNameOtherType = await createWebhook(account.id, { name: 'faq', type: 'task_push', url: 'https://bot.example.com/t', key, timeout_ms: 800 });
      expect(sameNameOtherType.timeout_ms).toBe(800);

      const duplicate = await admin('POST', `/admin/v1/accounts/${account.id}/bot-webhooks`, {
        name: 'faq',
        type: 'message_trigger',
        url: 'https://bot.example.com/other',
        key: 'k',
      });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual({ error: 'conflict', message: expect.stringContaining('faq') });

      const listed = await admin('GET', `/admin/v1/accounts/${account.id}/bot-webhooks`);
      expect(listed.status).toBe(200);
      expect(listed.body.items?.map((item) => [item.name, item.type])).toEqual([
        ['faq', 'message_trigger'],
        ['faq', 'task_push'],
      ]);
      expect(listed.text).not.toContain(key);
      expect(listed.body.items?.[0]).not.toHaveProperty('key');

      const createdId = Number(created.body.id);
      const removed = await admin('DELETE', `/admin/v1/accounts/${account.id}/bot-webhooks/${createdId}`);
      expect(removed.status).toBe(204);
      const again = await admin('DELETE', `/admin/v1/accounts/${account.id}/bot-webhooks/${createdId}`);
      expect(again.status).toBe(404);
      const otherAccount = await createAccount(configApi);
      const foreign = await admin('DELETE', `/admin/v1/accounts/${otherAccount.id}/bot-webhooks/${sameNameOtherType.id}`);
      expect(foreign.status).toBe(404);
      expect((await admin('GET', `/admin/v1/accounts/${account.id}/bot-webhooks`)).body.items).toHaveLength(1);
    });

    it('answers 404 for an unknown account and 401 without the admin token', async () => {
      const unknown = 2_000_000_001;
      const body = { name: 'x', type: 'task_push', url: 'https://bot.example.com/', key: 'k' };
      expect((await admin('POST', `/admin/v1/accounts/${unknown}/bot-webhooks`, body)).status).toBe(404);
      expect((await admin('GET', `/admin/v1/accounts/${unknown}/bot-webhooks`)).status).toBe(404);
      expect((await admin('DELETE', `/admin/v1/accounts/${unknown}/bot-webhooks/1`)).status).toBe(404);

      const noToken = { 'content-type': 'application/json' };
      const account = await createAccount(configApi);

      // Ids beyond the integer columns are the caller's mistake (400 naming the parameter), not a 500.
      const tooLarge = await admin('DELETE', `/admin/v1/accounts/${unknown}/bot-webhooks/99999999999`);
      expect(tooLarge.status).toBe(400);
      expect(tooLarge.body.details).toEqual([expect.objectContaining({ path: 'bot_id' })]);
      expect((await admin('GET', '/admin/v1/accounts/99999999999/bot-webhooks')).status).toBe(400);

      expect((await admin('POST', `/admin/v1/accounts/${account.id}/bot-webhooks`, body, noToken)).status).toBe(401);
      expect((await admin('GET', `/admin/v1/accounts/${account.id}/bot-webhooks`, undefined, noToken)).status).toBe(401);
      expect((await admin('DELETE', `/admin/v1/accounts/${account.id}/bot-webhooks/1`, undefined, noToken)).status).toBe(401);
      expect((await admin('GET', '/admin/v1/bot-calls', undefined, noToken)).status).toBe(401);
      const wrongToken = { authorization: 'Bearer not-the-admin-token-at-all', 'content-type': 'application/json' };
      expect((await admin('GET', '/admin/v1/bot-calls', undefined, wrongToken)).status).toBe(401);
    });

    it('validates the body, naming the field', async () => {
      const account = await createAccount(configApi);
      const path = `/admin/v1/accounts/${account.id}/bot-webhooks`;
      const valid = { name: 'v', type: 'task_push', url: 'https://bot.example.com/', key: 'k' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...valid, type: 'other' }, 'type'],
        [{ ...valid, name: '' }, 'name'],
        [{ ...valid, key: undefined }, 'key'],
        [{ ...valid, timeout_ms: 50 }, 'timeout_ms'],
        [{ ...valid, timeout_ms: 60_000 }, 'timeout_ms'],
        [{ ...valid, url: 'ftp://bot.example.com/' }, 'url'],
        [{ ...valid, url: 'not a url' }, 'url'],
        [{ ...valid, extra: 1 }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const reply = await admin('POST', path, body);
        expect([reply.status, reply.body.error]).toEqual([422, 'validation_failed']);
        expect(reply.body.details?.map((detail) => detail.path)).toContain(field);
      }
    });

    it('refuses a private target at creation when ALLOW_PRIVATE_TARGETS=false', async () => {
      const strict = await startApp(ConfigApiModule, { ALLOW_PRIVATE_TARGETS: 'false' });
      try {
        const account = await createAccount(strict);
        for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook']) {
          const reply = await send('POST', `${strict.url}/admin/v1/accounts/${account.id}/bot-webhooks`, ADMIN_HEADERS, {
            name: 'private',
            type: 'message_trigger',
            url,
            key: 'k',
          });
          expect(reply.status).toBe(422);
          expect(reply.body.details).toEqual([{ path: 'url', problem: expect.stringMatching(/^url .*non-public address/) }]);
        }
      } finally {
        await strict.close();
      }
    });
  });

  describe('message trigger', () => {
    it('signs the call in the query, appended to the query the URL already has, and hands on the answer', async () => {
      const account = await createAccount(configApi);
      const key = '221b368d7f5f597867f525971f28ff75';
      const hook = await receiver(json(200, { answerContent: 'Opening hours are 9 to 17.' }));
      await createWebhook(account.id, { name: '对接一', type: 'message_trigger', url: `${hook.url}?tenant=acme&x=a%20b`, key });

      const request = {
        account_id: account.id,
        integration_name: '对接一',
        regex: '.*hours.*',
        questionContent: 'What are your opening hours?',
        extra: { chatappOpenId: 'open-1', channel: 'app' },
        customerExtra: { customerId: 42 },
      };
      const reply = await messageTrigger(request);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ answerContent: 'Opening hours are 9 to 17.' });

      expect(hook.requests).toHaveLength(1);
      const [received] = hook.requests;
      expect(received.method).toBe('POST');
      expect(received.headers['content-type']).toBe('application/json');
      const url = new URL(received.url, 'http://receiver');
      expect(url.pathname).toBe('/hook');
      expect(received.url).toMatch(/^\/hook\?tenant=acme&x=a%20b&timestamp=\d+&sign=[0-9a-f]{40}$/);
      const timestamp = url.searchParams.get('timestamp') ?? '';
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      // The receiver recomputes the sign from the configured key and the timestamp it received.
      expect(url.searchParams.get('sign')).toBe(messageTriggerSign('对接一', key, timestamp));
      const body = JSON.parse(received.body);
      expect(body).toEqual({
        integrationName: '对接一',
        regex: '.*hours.*',
        questionContent: 'What are your opening hours?',
        extra: { chatappOpenId: 'open-1', channel: 'app' },
        customerExtra: { customerId: 42 },
      });
      expect(verifyMessageTriggerRequest({ query: Object.fromEntries(url.searchParams), body }, { key, integrationName: '对接一' })).toEqual({ ok: true });

      const [call] = await waitForCalls(account.id, 1);
      expect(call).toMatchObject({
        type: 'message_trigger',
        integration_name: '对接一',
        outcome: 'ok',
        response_status: 200,
        answer: { answerContent: 'Opening hours are 9 to 17.' },
        url: `${hook.url}?tenant=acme&x=a%20b`,
        error: null,
      });
      expect(JSON.parse(call.request_body)).toEqual(body);
    });

    it.each([
      ['a missing answerContent', json(200, { answer: 'hi' }), 502, 'answerContent is required'],
      ['a non-string answerContent', json(200, { answerContent: 5 }), 502, 'answerContent must be a string'],
      ['a non-JSON answer', json(200, 'hello'), 502, 'not valid JSON'],
      ['an HTTP error', json(500, { answerContent: 'x' }), 502, 'HTTP 500'],
    ])('answers 502 for %s', async (_name, responder, status, message) => {
      const account = await createAccount(configApi);
      const hook = await receiver(responder);
      await createWebhook(account.id, { name: 'faq', type: 'message_trigger', url: hook.url, key: 'k' });
      const reply = await messageTrigger({ account_id: account.id, integration_name: 'faq', regex: 'r', questionContent: 'q' });
      expect(reply.status).toBe(status);
      expect(reply.body).toEqual({ error: 'bad_gateway', message: expect.stringContaining(message) });
      const [call] = await waitForCalls(account.id, 1);
      expect(call.answer).toEqual(reply.body);
    });

    it('validates the request and answers 404 for an unknown webhook or account, 401 without a token', async () => {
      const account = await createAccount(configApi);
      const valid = { account_id: account.id, integration_name: 'faq', regex: 'r', questionContent: 'q' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...valid, questionContent: undefined }, 'questionContent'],
        [{ ...valid, regex: 5 }, 'regex'],
        [{ ...valid, account_id: 'one' }, 'account_id'],
        [{ ...valid, extra: { chatappOpenId: 5 } }, 'extra'],
        [{ ...valid, extra: 'x' }, 'extra'],
        [{ ...valid, customerExtra: { customerId: 'c-1' } }, 'customerExtra'],
        [{ ...valid, customerExtra: { customerId: 1.5 } }, 'customerExtra'],
        [{ ...valid, unexpected: true }, 'unexpected'],
      ];
      for (const [body, field] of cases) {
        const reply = await messageTrigger(body);
        expect([reply.status, reply.body.error]).toEqual([422, 'validation_failed']);
        expect(reply.body.details?.map((detail) => detail.path)).toContain(field);
      }
      const wrongType = await messageTrigger({ ...valid, customerExtra: { customerId: 'c-1' } });
      expect(wrongType.body.details).toContainEqual({ path: 'customerExtra', problem: 'customerExtra.customerId must be an integer' });

      const missing = await messageTrigger(valid);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: 'not_found', message: expect.stringContaining('"faq"') });
      const unknownAccount = await messageTrigger({ ...valid, account_id: 2_000_000_002 });
      expect(unknownAccount.status).toBe(404);
      expect(unknownAccount.body).toEqual({ error: 'not_found', message: 'account 2000000002 does not exist' });
      const [call] = await waitForCalls(account.id, 1);
      expect(call).toMatchObject({ outcome: 'not_found', bot_webhook_id: null, integration_name: 'faq' });

      const noToken = await send('POST', `${ingest.url}/v1/bot/message-trigger`, { 'content-type': 'application/json' }, valid);
      expect(noToken.status).toBe(401);
    });

    it('answers 504 when the webhook does not answer within its timeout_ms', async () => {
      const account = await createAccount(configApi);
      const hook = await receiver(hang);
      await createWebhook(account.id, { name: 'slow', type: 'message_trigger', url: hook.url, key: 'k', timeout_ms: 300 });
      const reply = await messageTrigger({ account_id: account.id, integration_name: 'slow', regex: 'r', questionContent: 'q' });
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({ error: 'gateway_timeout', message: 'the webhook did not answer within 300 ms' });
      const [call] = await waitForCalls(account.id, 1);
      expect(call).toMatchObject({ outcome: 'timeout', response_status: null });
      expect(hook.requests).toHaveLength(1);
    });

    it('stops using a deleted webhook at once', async () => {
      const account = await createAccount(configApi);
      const hook = await receiver(json(200, { answerContent: 'yes' }));
      const created = await createWebhook(account.id, { name: 'gone', type: 'message_trigger', url: hook.url, key: 'k' });
      const request = { account_id: account.id, integration_name: 'gone', regex: 'r', questionContent: 'q' };
      expect((await messageTrigger(request)).status).toBe(200);
      expect((await admin('DELETE', `/admin/v1/accounts/${account.id}/bot-webhooks/${created.id}`)).status).toBe(204);
      expect((await messageTrigger(request)).status).toBe(404);
      expect(hook.requests).toHaveLength(1);
      // The call after the delete is recorded, without a link to the deleted webhook.
      const calls = await waitForCalls(account.id, 2);
      expect(calls.every((call) => call.bot_webhook_id === null)).toBe(true);
      expect(calls[0].outcome).toBe('not_found');
    });
  });

  describe('task push', () => {
    it('signs the call in the body with the configured key and hands on the validated answer', async () => {
      const account = await createAccount(configApi);
      const key = 'abcde';
      const hook = await receiver(json(200, SAMPLE_TASK_PUSH_ANSWERS.plain));
      await createWebhook(account.id, { name: 'orders', type: 'task_push', url: `${hook.url}?route=tasks`, key });
      const reply = await taskPush({
        account_id: account.id,
        integration_name: 'orders',
        taskNodeId: 100,
        sessionId: 100,
        variables: { orderId: 'A-17' },
        customerExtra: { customerId: 9, callerNumber: '+4712345678', dialogueDesc: 'vip' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(SAMPLE_TASK_PUSH_ANSWERS.plain);

      const [received] = hook.requests;
      expect(received.url).toBe('/hook?route=tasks');
      expect(received.headers['content-type']).toBe('application/json');
      const body = JSON.parse(received.body);
      expect(body).toEqual({
        taskNodeId: 100,
        sessionId: 100,
        timestamp: expect.any(Number),
        sign: expect.stringMatching(/^[0-9a-f]{32}$/),
        variables: { orderId: 'A-17' },
        customerExtra: { customerId: 9, callerNumber: '+4712345678', dialogueDesc: 'vip' },
      });
      expect(Math.abs(body.timestamp - Date.now() / 1000)).toBeLessThan(60);
      expect(body.sign).toBe(taskPushSign(key, 100, 100, body.timestamp));
      expect(verifyTaskPushRequest({ body }, { key })).toEqual({ ok: true });

      const [call] = await waitForCalls(account.id, 1);
      expect(call).toMatchObject({ type: 'task_push', outcome: 'ok', answer: SAMPLE_TASK_PUSH_ANSWERS.plain });
      // The per-call signature is not kept in the log.
      expect(JSON.parse(call.request_body)).toEqual({ ...body, sign: '[redacted]' });
    });

    it('passes a valid answer of every msgType through unchanged', async () => {
      const account = await createAccount(configApi);
      let current: Record<string, unknown> = {};
      const hook = await receiver((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(current));
      });
      await createWebhook(account.id, { name: 'cards', type: 'task_push', url: hook.url, key: 'k' });
      for (const msgType of MSG_TYPES) {
        current = SAMPLE_TASK_PUSH_ANSWERS[msgType];
        const reply = await taskPush({ account_id: account.id, integration_name: 'cards', taskNodeId: 1, sessionId: 2 });
        expect([msgType, reply.status, reply.body]).toEqual([msgType, 200, current]);
      }
    });

    const withContent = (msgType: string, msgContent: unknown) => ({ resCode: 0, message: { msgType, msgContent } });
    it.each([
      ['a non-JSON answer', 200, '<html>ok</html>', "the webhook's answer is not valid JSON"],
      ['a missing resCode', 200, { message: { msgType: 'plain', msgContent: 'x' } }, 'resCode is required'],
      ['resCode 2', 200, { resCode: 2 }, 'resCode must be 0 (success) or -1 (failure)'],
      ['an unknown msgType', 200, withContent('video', 'x'), 'message.msgType must be one of plain, rich,'],
      ['plain with an object', 200, withContent('plain', { text: 'x' }), 'message.msgContent must be a string when msgType is plain'],
      ['rich with a number', 200, withContent('rich', 5), 'message.msgContent must be a string when msgType is rich'],
      ['selective_table with a numeric option id', 200, withContent('selective_table', { optionList: [{ id: 1, value: 'a' }] }), 'message.msgContent.optionList[0].id must be a string'],
      ['selective_list without optionList', 200, withContent('selective_list', { title: 't' }), 'message.msgContent.optionList is required'],
      ['show_product with a text product id', 200, withContent('show_product', { productList: [{ id: 'p' }] }), 'message.msgContent.productList[0].id must be an integer'],
      ['selective_product as a string', 200, withContent('selective_product', 'products'), 'message.msgContent must be an object when msgType is selective_product'],
      [
        'custom_card clickable without hitType',
        200,
        withContent('custom_card', { cardList: [{ type: 1, isHit: 1, content: 'c', hitContent: 'h' }] }),
        'message.msgContent.cardList[0].hitType is required when type is 1 and isHit is 1',
      ],
      ['routeType 3', 200, { resCode: 0, routeType: 3 }, 'routeType must be 1 (direct trigger) or 2 (wait for reply)'],
      ['a variable that is not a string', 200, { resCode: 0, variables: { count: 3 } }, 'variables.count must be a string'],
      ['an HTTP error status', 503, SAMPLE_TASK_PUSH_ANSWERS.plain, 'the webhook answered HTTP 503'],
      ['an answer over 64 KiB', 200, { resCode: 0, resError: 'x'.repeat(70_000) }, "the webhook's answer is larger than 65536 bytes"],
    ])('answers 502 with resCode -1 for %s', async (_name, status, answer, expected) => {
      const account = await createAccount(configApi);
      const hook = await receiver(json(status, answer));
      await createWebhook(account.id, { name: 'strict', type: 'task_push', url: hook.url, key: 'k' });
      const reply = await taskPush({ account_id: account.id, integration_name: 'strict', taskNodeId: 1, sessionId: 1 });
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({ resCode: -1, resError: expect.stringContaining(expected) });
      const [call] = await waitForCalls(account.id, 1);
      expect(call.outcome).toBe(status === 200 ? 'invalid_answer' : 'failed');
      expect(call.response_status).toBe(status);
      expect(call.answer).toEqual(reply.body);
      expect(Buffer.byteLength(call.response_body)).toBeLessThanOrEqual(4096);
    });

    it('validates the request', async () => {
      const account = await createAccount(configApi);
      const valid = { account_id: account.id, integration_name: 't', taskNodeId: 1, sessionId: 2 };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...valid, taskNodeId: '1' }, 'taskNodeId'],
        [{ ...valid, sessionId: 1.5 }, 'sessionId'],
        [{ ...valid, sessionId: undefined }, 'sessionId'],
        [{ ...valid, variables: { a: 1 } }, 'variables'],
        [{ ...valid, customerExtra: { customerId: '9' } }, 'customerExtra'],
        [{ ...valid, customerExtra: { callerNumber: 123 } }, 'customerExtra'],
        [{ ...valid, customerExtra: { dialogueDesc: {} } }, 'customerExtra'],
      ];
      for (const [body, field] of cases) {
        const reply = await taskPush(body);
        expect([reply.status, reply.body.error]).toEqual([422, 'validation_failed']);
        expect(reply.body.details?.map((detail) => detail.path)).toContain(field);
      }
      const missing = await taskPush(valid);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('not_found');
    });

    it('answers 504 with resCode -1 on a time-out', async () => {
      const account = await createAccount(configApi);
      const hook = await receiver(hang);
      await createWebhook(account.id, { name: 'slow', type: 'task_push', url: hook.url, key: 'k', timeout_ms: 300 });
      const reply = await taskPush({ account_id: account.id, integration_name: 'slow', taskNodeId: 1, sessionId: 1 });
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({ resCode: -1, resError: 'the webhook did not answer within 300 ms' });
    });
  });

  it('refuses a private target at call time when ALLOW_PRIVATE_TARGETS=false', async () => {
    const strictIngest = await startApp(IngestModule, { ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const account = await createAccount(configApi);
      const hook = await receiver(json(200, { answerContent: 'should not be asked' }));
      const port = new URL(hook.url).port;
      // Configured while private targets were allowed (or the DNS answer changed later).
      await createWebhook(account.id, { name: 'literal', type: 'message_trigger', url: hook.url, key: 'k' });
      await createWebhook(account.id, { name: 'by-name', type: 'task_push', url: `http://localhost:${port}/hook`, key: 'k' });

      const literal = await messageTrigger({ account_id: account.id, integration_name: 'literal', regex: 'r', questionContent: 'q' }, strictIngest);
      expect(literal.status).toBe(502);
      expect(literal.body).toEqual({ error: 'bad_gateway', message: expect.stringContaining('not a public address') });
      const byName = await taskPush({ account_id: account.id, integration_name: 'by-name', taskNodeId: 1, sessionId: 1 }, strictIngest);
      expect(byName.status).toBe(502);
      expect(byName.body).toEqual({ resCode: -1, resError: expect.stringContaining('non-public address') });
      expect(hook.requests).toHaveLength(0);

      const calls = await waitForCalls(account.id, 2);
      expect(calls.map((call) => call.outcome)).toEqual(['refused', 'refused']);
    } finally {
      await strictIngest.close();
    }
  });

  it('keeps serving a healthy webhook while a dead one hangs, and caps the calls in flight to the dead one', async () => {
    const account = await createAccount(configApi);
    const dead = await receiver(hang);
    const healthy = await receiver(json(200, { answerContent: 'fine' }));
    await createWebhook(account.id, { name: 'dead', type: 'message_trigger', url: dead.url, key: 'k', timeout_ms: 30_000 });
    await createWebhook(account.id, { name: 'healthy', type: 'message_trigger', url: healthy.url, key: 'k' });
    const ask = (name: string) => messageTrigger({ account_id: account.id, integration_name: name, regex: 'r', questionContent: 'q' });

    let settled = 0;
    const hanging = Array.from({ length: BOT_MAX_IN_FLIGHT_PER_ORIGIN }, () =>
      ask('dead').finally(() => {
        settled += 1;
      }),
    );
    await waitFor('every call to reach the dead webhook', () => dead.requests.length === BOT_MAX_IN_FLIGHT_PER_ORIGIN);

    const overflow = await ask('dead');
    expect(overflow.status).toBe(503);
    expect(overflow.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('too many calls in flight') });

    const fine = await ask('healthy');
    expect(fine.status).toBe(200);
    expect(fine.body).toEqual({ answerContent: 'fine' });
    expect(settled).toBe(0);

    // The dead endpoint's connections drop: every hanging call ends as a failed call, none is retried.
    await dead.stop();
    const results = await Promise.all(hanging);
    expect(new Set(results.map((result) => result.status))).toEqual(new Set([502]));
    expect(dead.requests).toHaveLength(BOT_MAX_IN_FLIGHT_PER_ORIGIN);
    const refused = await waitForCalls(account.id, 1, { outcome: 'refused' });
    expect(refused[0].error).toContain('too many calls in flight');
  });

  describe('call log', () => {
    it('lists calls newest first with filters and stable cursor pages, never with the key', async () => {
      const account = await createAccount(configApi);
      const key = 'call-log-key-must-not-leak-77';
      const hook = await receiver((request, response) => {
        const wanted = JSON.parse(request.body).questionContent === 'fail' ? 500 : 200;
        response.writeHead(wanted, { 'content-type': 'application/json' }).end(JSON.stringify({ answerContent: 'ok', resCode: 0 }));
      });
      await createWebhook(account.id, { name: 'a', type: 'message_trigger', url: hook.url, key });
      await createWebhook(account.id, { name: 'b', type: 'task_push', url: hook.url, key });
      const before = new Date(Date.now() - 1000).toISOString();
      for (const question of ['one', 'fail', 'three']) {
        await messageTrigger({ account_id: account.id, integration_name: 'a', regex: 'r', questionContent: question });
      }
      await taskPush({ account_id: account.id, integration_name: 'b', taskNodeId: 5, sessionId: 6 });
      await taskPush({ account_id: account.id, integration_name: 'b', taskNodeId: 7, sessionId: 8 });

      const all = await waitForCalls(account.id, 5);
      expect(all).toHaveLength(5);
      const ids = all.map((call) => BigInt(call.id));
      expect([...ids].sort((x, y) => (x > y ? -1 : 1))).toEqual(ids);
      // Rows are written just after each answer, so only the id order (not the call order) is asserted above.
      expect(all.map((call) => call.type).sort()).toEqual(['message_trigger', 'message_trigger', 'message_trigger', 'task_push', 'task_push']);
      const first = all.find((call) => call.type === 'message_trigger' && JSON.parse(call.request_body).questionContent === 'one');
      expect(first).toMatchObject({
        account_id: account.id,
        bot_webhook_id: expect.any(Number),
        integration_name: 'a',
        url: hook.url,
        response_status: 200,
        response_body: '{"answerContent":"ok","resCode":0}',
        answer: { answerContent: 'ok' },
        outcome: 'ok',
        error: null,
        duration_ms: expect.any(Number),
        created_at: expect.any(String),
      });
      expect(JSON.parse(first?.request_body ?? 'null')).toEqual({ integrationName: 'a', regex: 'r', questionContent: 'one' });

      const listed = await admin('GET', `/admin/v1/bot-calls?account_id=${account.id}`);
      expect(listed.text).not.toContain(key);
      for (const request of hook.requests) {
        const sign = new URL(request.url, 'http://receiver').searchParams.get('sign') ?? (JSON.parse(request.body).sign as string);
        expect(listed.text).not.toContain(sign);
      }

      expect((await botCalls({ account_id: account.id, type: 'task_push' })).items).toHaveLength(2);
      expect((await botCalls({ account_id: account.id, integration_name: 'a' })).items).toHaveLength(3);
      const failed = await botCalls({ account_id: account.id, outcome: 'failed' });
      expect(failed.items.map((call) => [call.integration_name, call.response_status])).toEqual([['a', 500]]);
      expect((await botCalls({ account_id: account.id, since: before })).items).toHaveLength(5);
      expect((await botCalls({ account_id: account.id, until: before })).items).toHaveLength(0);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: BotCallsPage = await botCalls({ account_id: account.id, limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((call) => call.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(all.map((call) => call.id));

      for (const bad of ['limit=501', 'limit=0', 'cursor=abc', 'outcome=great', 'type=x', 'since=yesterday', 'account_id=x', 'account_id=99999999999', 'account_id=0']) {
        const reply = await admin('GET', `/admin/v1/bot-calls?${bad}`);
        expect([bad, reply.status, reply.body.error]).toEqual([bad, 400, 'invalid_query']);
      }
    });

    it('exposes a duration histogram by type and outcome', async () => {
      const metrics = await (await fetch(`${ingest.url}/metrics`)).text();
      expect(metrics).toMatch(/bot_call_duration_seconds_bucket\{le="[^"]+",type="message_trigger",outcome="ok"\}/);
      expect(metrics).toMatch(/bot_call_duration_seconds_count\{type="task_push",outcome="invalid_answer"\}/);
    });
  });

  describe('example bot webhook', () => {
    let server: Server;
    let base = '';

    beforeAll(async () => {
      server = createBotWebhookServer({ key: 'example-key-0123', integrationName: 'example-bot' });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it("accepts the service's signed calls and answers on-spec", async () => {
      const account = await createAccount(configApi);
      await createWebhook(account.id, { name: 'example-bot', type: 'message_trigger', url: `${base}/message-trigger`, key: 'example-key-0123' });
      await createWebhook(account.id, { name: 'example-bot', type: 'task_push', url: `${base}/task-push`, key: 'example-key-0123' });

      const answer = await messageTrigger({ account_id: account.id, integration_name: 'example-bot', regex: '.*', questionContent: 'Where is my parcel?' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ answerContent: 'You asked: Where is my parcel?' });

      const task = await taskPush({ account_id: account.id, integration_name: 'example-bot', taskNodeId: 3, sessionId: 4 });
      expect(task.status).toBe(200);
      expect(task.body).toEqual({
        resCode: 0,
        resError: '',
        message: { msgType: 'plain', msgContent: 'Reached task node 3 in session 4.' },
        variables: { lastTaskNodeId: '3' },
      });
    });

    it('refuses calls signed with another key (the service reports 502)', async () => {
      const account = await createAccount(configApi);
      await createWebhook(account.id, { name: 'example-bot', type: 'message_trigger', url: `${base}/message-trigger`, key: 'wrong-key' });
      await createWebhook(account.id, { name: 'example-bot', type: 'task_push', url: `${base}/task-push`, key: 'wrong-key' });
      const answer = await messageTrigger({ account_id: account.id, integration_name: 'example-bot', regex: '.*', questionContent: 'q' });
      expect(answer.status).toBe(502);
      expect(answer.body.message).toContain('HTTP 401');
      const task = await taskPush({ account_id: account.id, integration_name: 'example-bot', taskNodeId: 3, sessionId: 4 });
      expect(task.status).toBe(502);
      expect(task.body).toEqual({ resCode: -1, resError: 'the webhook answered HTTP 401' });

      const direct = await send('POST', `${base}/message-trigger?timestamp=${Math.floor(Date.now() / 1000)}&sign=deadbeef`, { 'content-type': 'application/json' }, {
        integrationName: 'example-bot',
        regex: 'r',
        questionContent: 'q',
      });
      expect(direct.status).toBe(401);
      expect(direct.body).toEqual({ error: 'unauthorized', message: 'sign does not match' });
    });
  });
});
