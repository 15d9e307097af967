import type { AddressInfo } from 'node:net';
import { signWebhook } from '@app/signing';
import { createReceiverServer, type ReceivedCallback } from './receiver.server';

describe('example receiver', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const received: ReceivedCallback[] = [];
  const server = createReceiverServer({ signingSecret: secret, onCallback: (callback) => received.push(callback) });
  let url = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (body: string, contentType: string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': contentType, ...headers } });

  it('accepts a signed form callback once and decodes the nested message', async () => {
    const body = 'action=Customer_create&message[id]=7&message[tags][]=vip&message[cellphones][0][content]=123';
    const headers = signWebhook([secret], 'evt_form', Math.floor(Date.now() / 1000), body);
    expect((await post(body, 'application/x-www-form-urlencoded', { ...headers })).status).toBe(204);
    expect((await post(body, 'application/x-www-form-urlencoded', { ...headers })).status).toBe(204);
    expect(received.filter((callback) => callback.webhookId === 'evt_form')).toEqual([
      {
        webhookId: 'evt_form',
        action: 'Customer_create',
        message: { id: '7', tags: ['vip'], cellphones: [{ content: '123' }] },
        contentType: 'application/x-www-form-urlencoded',
      },
    ]);
  });

  it('refuses a body that does not match its signature', async () => {
    const headers = signWebhook([secret], 'evt_bad', Math.floor(Date.now() / 1000), '{"action":"a"}');
    const response = await post('{"action":"b"}', 'application/json', { ...headers });
    expect(response.status).toBe(401);
    expect(received.some((callback) => callback.webhookId === 'evt_bad')).toBe(false);
  });
});
