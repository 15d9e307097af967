import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { OutboundHttpClient, SecretBox } from '@app/runtime';
import { freePort } from '@app/testing';
import { ClientCertificateAgents } from './client-certificate-agents';
import type { DestinationAuth, OutgoingDelivery, TransportOutcome } from './destination-transport';
import { OAuth2TokenCache } from './oauth2-token-cache';
import { MAX_STORED_RESPONSE_BYTES } from './transport-outcome';
import { USER_AGENT } from './user-agent';
import { WebhookTransport } from './webhook-transport';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real receiver on loopback; each test says how it answers. */
class Receiver {
  readonly requests: Received[] = [];
  answer: (response: ServerResponse) => void = (response) => void response.writeHead(200).end('ok');
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      this.answer(response);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook?account=7`;
  }

  async stop(): Promise<void> {
    // A hanging answer keeps its socket open; close() alone would wait for it.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function delivery(body = '{"action":"Customer_create","message":{"id":7,"n":1.50}}', contentType = 'application/json'): OutgoingDelivery {
  return {
    eventId: 'evt_unit_1',
    body,
    contentType,
    signatureHeaders: { 'webhook-id': 'evt_unit_1', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,c2lnbmF0dXJlLW9uZQ== v1,c2lnbmF0dXJlLXR3bw==' },
  };
}

const opened: { close(): Promise<void> }[] = [];
// Only an oauth2 destination reaches the token cache, and none is sent here: its Redis never connects.
const unusedRedis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
const secretBox = new SecretBox({ current: { id: 'unit', key: randomBytes(32) }, previous: [] });

/** Wired as DestinationTransports wires it, without Nest or Redis. */
function webhookTransport(allowPrivateTargets = true): WebhookTransport {
  const http = new OutboundHttpClient({ allowPrivateTargets });
  const certificates = new ClientCertificateAgents(allowPrivateTargets);
  opened.push(http, certificates);
  return new WebhookTransport(http, new OAuth2TokenCache(unusedRedis, 'unit', secretBox, http), certificates);
}

const receiver = new Receiver();
let url = '';

beforeAll(async () => {
  url = await receiver.start();
});
beforeEach(() => {
  receiver.requests.length = 0;
  receiver.answer = (response) => void response.writeHead(200).end('ok');
});
afterAll(async () => {
  await Promise.all(opened.map((each) => each.close()));
  await receiver.stop();
  unusedRedis.disconnect();
});

async function send(options: { to?: string; auth?: DestinationAuth | null; timeoutMs?: number; what?: OutgoingDelivery; transport?: WebhookTransport } = {}): Promise<TransportOutcome> {
  const transport = options.transport ?? webhookTransport();
  return transport.send({ id: 'dst_unit', type: 'webhook', url: options.to ?? url, auth: options.auth ?? null }, options.what ?? delivery(), options.timeoutMs ?? 5000);
}

describe('WebhookTransport: the request', () => {
  it('POSTs exactly the given bytes with the given content type, to the URL with its query', async () => {
    const form = delivery('action=Customer_create&name=Ren%C3%A9e+%26+co&amount=1.50', 'application/x-www-form-urlencoded');
    await send({ what: form });
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hook?account=7');
    expect(request.body).toBe(form.body);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers['content-length']).toBe(String(Buffer.byteLength(form.body)));
  });

  it('sends the signature headers, the extra headers, its user agent and the header auth', async () => {
    const signed = { ...delivery(), extraHeaders: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
    await send({ what: signed, auth: { type: 'header', name: 'X-Api-Key', value: 'hv-api-key-7731' } });
    expect(receiver.requests[0].headers).toMatchObject({
      ...signed.signatureHeaders,
      traceparent: signed.extraHeaders.traceparent,
      'user-agent': USER_AGENT,
      'x-api-key': 'hv-api-key-7731',
    });
  });

  it('makes no call when the header auth would break the request', async () => {
    const cases: [DestinationAuth, string][] = [
      [{ type: 'header', name: 'X-Api-Key', value: 'key\r\nx-injected: 1' }, 'auth.value holds a line break or NUL'],
      [{ type: 'header', name: 'Content-Type', value: 'text/plain' }, 'auth.name content-type is set by the service'],
      [{ type: 'header', name: 'Webhook-Signature', value: 'v1,forged' }, 'auth.name webhook-signature is one of the webhook-* signature headers'],
    ];
    for (const [auth, reason] of cases) {
      const outcome = await send({ auth });
      expect(outcome).toMatchObject({ ok: false, reason });
      expect(outcome.status).toBeUndefined();
    }
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('WebhookTransport: the answer', () => {
  it('takes a 2xx as a success, with its status, body and headers', async () => {
    receiver.answer = (response) => void response.writeHead(202, { 'x-receipt': 'rcpt-31' }).end('{"queued":true}');
    const outcome = await send();
    expect(outcome).toMatchObject({ ok: true, status: 202, responseBody: '{"queued":true}', responseHeaders: expect.objectContaining({ 'x-receipt': 'rcpt-31' }) });
  });

  it('fails a 500 with its status and body, retryable, ignoring a Retry-After it does not honour', async () => {
    receiver.answer = (response) => void response.writeHead(500, { 'retry-after': '120' }).end('database down');
    const outcome = await send();
    expect(outcome).toMatchObject({ ok: false, status: 500, reason: 'HTTP 500: server error', responseBody: 'database down' });
    expect(outcome).not.toHaveProperty('retryAfterMs');
    expect(outcome).not.toHaveProperty('failure');
  });

  it('reads Retry-After of a 429, in seconds or as an HTTP date, and throttles', async () => {
    receiver.answer = (response) => void response.writeHead(429, { 'retry-after': '120' }).end('slow down');
    const inSeconds = await send();
    expect(inSeconds).toMatchObject({ ok: false, status: 429, reason: 'HTTP 429: too many requests', retryAfterMs: 120_000, responseBody: 'slow down' });

    const at = new Date(Date.now() + 90_000).toUTCString();
    receiver.answer = (response) => void response.writeHead(429, { 'retry-after': at }).end();
    const asDate = await send();
    expect(asDate).toMatchObject({ ok: false, status: 429 });
    // The date has whole seconds: up to a second (and the call's time) is lost.
    expect(asDate.ok ? null : asDate.retryAfterMs).toBeGreaterThan(85_000);
    expect(asDate.ok ? null : asDate.retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('fails a 410 as permanent, without a retry delay', async () => {
    receiver.answer = (response) => void response.writeHead(410, { 'retry-after': '60' }).end('gone');
    const outcome = await send();
    expect(outcome).toMatchObject({ ok: false, status: 410, reason: 'HTTP 410: rejected', responseBody: 'gone' });
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  it('keeps the first 4 KiB of a longer body', async () => {
    const long = 'x'.repeat(3000) + 'y'.repeat(7000);
    receiver.answer = (response) => void response.writeHead(400).end(long);
    const outcome = await send();
    expect(outcome.status).toBe(400);
    expect(outcome.responseBody).toBe(long.slice(0, MAX_STORED_RESPONSE_BYTES));
  });

  it('cuts a longer body on a character boundary, within 4 KiB and a prefix of what was sent', async () => {
    const long = 'a'.repeat(MAX_STORED_RESPONSE_BYTES - 1) + '€'.repeat(10);
    receiver.answer = (response) => void response.writeHead(400).end(long);
    const kept = (await send()).responseBody ?? '';
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(MAX_STORED_RESPONSE_BYTES);
    expect(kept).toBe('a'.repeat(MAX_STORED_RESPONSE_BYTES - 1));
  });

  it('keeps response headers only up to 4 KiB of JSON', async () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`x-filler-${String(index).padStart(2, '0')}`, 'f'.repeat(300)]));
    receiver.answer = (response) => void response.writeHead(200, many).end();
    const outcome = await send();
    const kept = outcome.responseHeaders ?? {};
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(MAX_STORED_RESPONSE_BYTES);
    expect(kept['x-filler-00']).toBe('f'.repeat(300));
    expect(kept['x-filler-29']).toBeUndefined();
  });
});

describe('WebhookTransport: no answer', () => {
  it('times out a receiver that never answers, within the deadline', async () => {
    receiver.answer = () => undefined;
    const started = performance.now();
    const outcome = await send({ timeoutMs: 300 });
    const waited = performance.now() - started;
    expect(outcome).toMatchObject({ ok: false, failure: 'timeout', reason: 'time-out: no answer within 300 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(280);
    expect(outcome.status).toBeUndefined();
    expect(receiver.requests).toHaveLength(1);
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(1500);
  });

  it('times out a body that stops half-way: one deadline covers the whole exchange', async () => {
    receiver.answer = (response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('partial');
    };
    const started = performance.now();
    const outcome = await send({ timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, failure: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('fails a refused connection without a status', async () => {
    const outcome = await send({ to: `http://127.0.0.1:${await freePort()}/hook` });
    expect(outcome).toMatchObject({ ok: false, failure: 'connection', reason: expect.stringMatching(/^connection failed: .*ECONNREFUSED/) });
    expect(outcome.status).toBeUndefined();
    expect(outcome.responseBody).toBeUndefined();
  });

  it('fails a URL that cannot be parsed as a permanent failure', async () => {
    const outcome = await send({ to: 'http://exa mple.com/hook' });
    expect(outcome).toMatchObject({ ok: false, failure: 'invalid_url', reason: 'invalid target: the URL is not valid' });
  });
});

describe('WebhookTransport: private targets', () => {
  it('refuses loopback, by literal, by name and as IPv4-mapped IPv6, without dialling', async () => {
    const guarded = webhookTransport(false);
    const port = new URL(url).port;
    const outcomes = await Promise.all([`http://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`].map((to) => send({ to, transport: guarded })));
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ ok: false, failure: 'refused_target', reason: expect.stringMatching(/^refused: /) });
    }
    expect(outcomes.map((outcome) => (outcome.ok ? null : outcome.reason))).toEqual([
      'refused: 127.0.0.1 is not a public address',
      'refused: localhost resolves to a non-public address',
      'refused: ::ffff:7f00:1 is not a public address',
    ]);
    expect(receiver.requests).toHaveLength(0);
  });

  it('calls loopback when private targets are allowed', async () => {
    const port = new URL(url).port;
    expect(await send({ to: `http://localhost:${port}/hook`, transport: webhookTransport(true) })).toMatchObject({ ok: true, status: 200 });
    expect(receiver.requests).toHaveLength(1);
  });
});
