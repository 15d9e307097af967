import { Webhook } from 'standardwebhooks';
import {
  generateSigningSecret,
  messageTriggerSign,
  openApiSign,
  signWebhook,
  taskPushSign,
  verifyMessageTriggerRequest,
  verifyOpenApiSign,
  verifyTaskPushRequest,
  verifyWebhook,
} from './index';

describe('Open API v2 signature', () => {
  const input = { email: 'admin@example.com', openApiToken: '3f1c0b8e6a2d4f5e9b7c', timestamp: 1700000000, nonce: 'n-0001' };

  it('matches the CONTRACT §2 test vector', () => {
    expect(openApiSign(input)).toBe('29ecc78a62eb5ad1b74258e845f5079effbd58b1dcce683fd4aa6c9d0ddda816');
  });

  it('verifies the right sign and refuses a changed one', () => {
    expect(verifyOpenApiSign(input, '29ecc78a62eb5ad1b74258e845f5079effbd58b1dcce683fd4aa6c9d0ddda816')).toBe(true);
    expect(verifyOpenApiSign({ ...input, nonce: 'n-0002' }, '29ecc78a62eb5ad1b74258e845f5079effbd58b1dcce683fd4aa6c9d0ddda816')).toBe(false);
    expect(verifyOpenApiSign(input, 'short')).toBe(false);
  });
});

describe('bot webhook signatures', () => {
  it('message trigger matches the CONTRACT §6 vector', () => {
    expect(messageTriggerSign('对接一', '221b368d7f5f597867f525971f28ff75', 1496631984)).toBe('96d8271cd705d3f134d215e9b3c27bb73f1132ed');
  });

  it('task push matches the CONTRACT §6 vector', () => {
    expect(taskPushSign('abcde', 100, 100, 1551510709)).toBe('9195e2a5c1d84b86dc59819f29a0e300');
  });

  const now = new Date(1496631984 * 1000);

  it('verifies a message trigger with timestamp and sign in the query or in the body', () => {
    const key = '221b368d7f5f597867f525971f28ff75';
    const body = { integrationName: '对接一', regex: '.*', questionContent: 'hi' };
    const signed = { timestamp: '1496631984', sign: '96d8271cd705d3f134d215e9b3c27bb73f1132ed' };
    expect(verifyMessageTriggerRequest({ query: signed, body }, { key, now })).toEqual({ ok: true });
    expect(verifyMessageTriggerRequest({ body: { ...body, ...signed } }, { key, now })).toEqual({ ok: true });
    expect(verifyMessageTriggerRequest({ query: signed, body }, { key: 'other', now })).toEqual({ ok: false, reason: 'sign does not match' });
    expect(verifyMessageTriggerRequest({ query: signed, body }, { key, now: new Date(now.getTime() + 301_000) }).ok).toBe(false);
  });

  it('verifies a task push signed in the body', () => {
    const body = { taskNodeId: 100, sessionId: 100, timestamp: 1551510709, sign: '9195e2a5c1d84b86dc59819f29a0e300' };
    const at = new Date(1551510709 * 1000);
    expect(verifyTaskPushRequest({ body }, { key: 'abcde', now: at })).toEqual({ ok: true });
    expect(verifyTaskPushRequest({ body: { ...body, sessionId: 101 } }, { key: 'abcde', now: at })).toEqual({ ok: false, reason: 'sign does not match' });
    expect(verifyTaskPushRequest({ body: { ...body, sign: undefined } }, { key: 'abcde', now: at })).toEqual({ ok: false, reason: 'sign is missing' });
  });
});

describe('Standard Webhooks callback signature', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"action":"Customer_destroy","message":{"id":1}}';

  it('is accepted by the standardwebhooks reference library', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook([secret], 'evt_1', timestamp, body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('carries one signature per secret during a rotation, each verifiable on its own', () => {
    const next = generateSigningSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook([next, secret], 'evt_2', timestamp, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook({ ...headers }, body, secret)).toEqual({ ok: true });
    expect(verifyWebhook({ ...headers }, body, next)).toEqual({ ok: true });
    expect(new Webhook(next).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('refuses a changed body, another secret and a stale timestamp', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook([secret], 'evt_3', timestamp, body);
    expect(verifyWebhook({ ...headers }, body + ' ', secret).ok).toBe(false);
    expect(verifyWebhook({ ...headers }, body, generateSigningSecret()).ok).toBe(false);
    const stale = signWebhook([secret], 'evt_3', timestamp - 600, body);
    expect(verifyWebhook({ ...stale }, body, secret)).toEqual({ ok: false, reason: 'webhook-timestamp is outside the tolerance window' });
  });

  it('makes secrets of the documented form', () => {
    const generated = generateSigningSecret();
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(generated.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
  });
});
