import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import type { DestinationTarget } from '../../apps/delivery-worker/src/delivery/destinations/destination-transport';
import type { DestinationTransports } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import { freePort } from '@app/testing';
import { HangingPort } from '../support/hanging-port';
import { waitFor } from '@app/testing';
import { TestReceiver } from '../support/receiver';
import { makeCertificateAuthority } from '../support/test-certificates';
import { CapturedLog, expectNoCredential, testDelivery, testRedis, testTransports } from '../support/transport-fixtures';

const PREFIX = `${process.env.REDIS_PREFIX ?? 'cbtest'}:webhook-transport-spec`;
const CLIENT_SECRET = 'cs-very-secret-0042';
const HEADER_VALUE = 'hv-api-key-7731';
const log = new CapturedLog();
const reasons: string[] = [];
const credentials: string[] = [CLIENT_SECRET, HEADER_VALUE];
let redis: Redis;
const transports: DestinationTransports[] = [];

function worker(): DestinationTransports {
  const transport = testTransports(redis, PREFIX, log);
  transports.push(transport);
  return transport;
}

async function send(transport: DestinationTransports, target: DestinationTarget, timeoutMs = 5000) {
  const outcome = await transport.send(target, testDelivery(), timeoutMs);
  if (!outcome.ok) reasons.push(outcome.reason);
  return outcome;
}

beforeAll(() => {
  redis = testRedis();
});

afterAll(async () => {
  await Promise.all(transports.map((transport) => transport.close()));
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('webhook transport: header auth', () => {
  const receiver = new TestReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it('sends the exact body, the signature headers and the auth header', async () => {
    const delivery = testDelivery('{"action":"Customer_create","message":{"id":7,"n":1.50}}');
    const outcome = await worker().send({ id: 'dst_header', type: 'webhook', url: receiver.url, auth: { type: 'header', name: 'X-Api-Key', value: HEADER_VALUE } }, delivery, 5000);
    expect(outcome).toMatchObject({ ok: true, status: 200, responseBody: 'ok' });
    const request = receiver.requests.at(-1);
    expect(request?.body).toBe(delivery.body);
    expect(request?.headers).toMatchObject({ 'x-api-key': HEADER_VALUE, 'content-type': 'application/json', ...delivery.signatureHeaders });
  });

  it('refuses an auth header that would replace a signature header, without calling', async () => {
    const before = receiver.requests.length;
    const outcome = await send(worker(), { id: 'dst_bad_header', type: 'webhook', url: receiver.url, auth: { type: 'header', name: 'Webhook-Signature', value: HEADER_VALUE } });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining('webhook-signature') });
    expect(receiver.requests.length).toBe(before);
  });

  it('reports a non-2xx answer with its status and Retry-After', async () => {
    receiver.respondStatus(503, { 'retry-after': '7' }, 'busy');
    const outcome = await send(worker(), { id: 'dst_503', type: 'webhook', url: receiver.url, auth: null });
    expect(outcome).toMatchObject({ ok: false, status: 503, reason: 'HTTP 503: server error', retryAfterMs: 7000, responseBody: 'busy' });
    receiver.respondStatus(200);
  });
});

describe('webhook transport: OAuth2 client credentials', () => {
  const tokenEndpoint = new TestReceiver();
  const receiver = new TestReceiver();
  let issued = 0;
  let validToken = '';
  let tokenStatus = 200;

  beforeAll(async () => {
    tokenEndpoint.respondWith((request, response) => {
      if (tokenStatus !== 200) return void response.writeHead(tokenStatus, { 'content-type': 'application/json' }).end('{"error":"invalid_client","error_description":"secret cs-very-secret-0042 is wrong"}');
      issued += 1;
      validToken = `tok-${issued}-${Date.now()}`;
      credentials.push(validToken);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: validToken, token_type: 'Bearer', expires_in: 3600 }));
    });
    receiver.respondWith((request, response) => {
      response.writeHead(request.headers.authorization === `Bearer ${validToken}` ? 200 : 401).end();
    });
    await Promise.all([tokenEndpoint.start('/oauth/token'), receiver.start()]);
  });
  afterAll(() => Promise.all([tokenEndpoint.stop(), receiver.stop()]));

  const target = (): DestinationTarget => ({
    id: 'dst_oauth',
    type: 'webhook',
    url: receiver.url,
    auth: { type: 'oauth2', token_url: tokenEndpoint.url, client_id: 'client one', client_secret: CLIENT_SECRET, scope: 'events.write' },
  });

  it('asks once for 50 sends across two workers sharing Redis, per RFC 6749 client credentials', async () => {
    const [first, second] = [worker(), worker()];
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, index) => send(index % 2 ? first : second, target())));
    expect(outcomes.filter((outcome) => !outcome.ok)).toEqual([]);
    expect(issued).toBe(1);
    const tokenRequest = tokenEndpoint.requests[0];
    expect(Object.fromEntries(new URLSearchParams(tokenRequest.body))).toEqual({ grant_type: 'client_credentials', scope: 'events.write' });
    expect(tokenRequest.headers.authorization).toBe(`Basic ${Buffer.from(`client+one:${CLIENT_SECRET}`).toString('base64')}`);
  });

  it('keeps the token sealed in Redis under a key naming only the destination', async () => {
    const keys = await redis.keys(`${PREFIX}:destination-oauth2:*`);
    expect(keys).toEqual([`${PREFIX}:destination-oauth2:{dst_oauth}:token`]);
    const stored = (await redis.get(keys[0])) ?? '';
    expect(stored.startsWith('gcm1:')).toBe(true);
    expect(stored).not.toContain(validToken);
  });

  it('fails the attempt that meets a 401 and asks for a new token on the next one', async () => {
    validToken = 'revoked';
    const rejected = await send(worker(), target());
    expect(rejected).toMatchObject({ ok: false, status: 401 });
    expect(issued).toBe(1);
    const next = await send(worker(), target());
    expect(next).toMatchObject({ ok: true, status: 200 });
    expect(issued).toBe(2);
  });

  it('fails the attempt, without asking token_url, while Redis cannot be reached', async () => {
    const unreachable = new Redis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const cut = testTransports(unreachable, PREFIX, log);
    try {
      const before = tokenEndpoint.requests.length;
      const outcome = await send(cut, { ...target(), id: 'dst_oauth_no_redis' });
      expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(/^oauth2 token cache unavailable: /) });
      expect(tokenEndpoint.requests.length).toBe(before);
    } finally {
      await cut.close();
      unreachable.disconnect();
    }
  });

  it('bounds the token request by the attempt time-out', async () => {
    const hanging = await new HangingPort().start();
    try {
      const outcome = await send(worker(), { ...target(), id: 'dst_oauth_hanging', auth: { ...(target().auth as object), token_url: `http://127.0.0.1:${hanging.port}/token` } as DestinationTarget['auth'] }, 800);
      expect(outcome).toMatchObject({ ok: false, reason: `token endpoint 127.0.0.1:${hanging.port}: no answer within 800 ms` });
    } finally {
      await hanging.stop();
    }
  });

  it('names the whole attempt deadline when the call times out after a slow token request', async () => {
    const slowTokenEndpoint = await new TestReceiver()
      .respondWith((_request, response) => void setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"tok-slow","token_type":"Bearer","expires_in":3600}'), 150))
      .start('/oauth/token');
    const hanging = await new HangingPort().start();
    try {
      const auth = { ...(target().auth as object), token_url: slowTokenEndpoint.url } as DestinationTarget['auth'];
      const outcome = await send(worker(), { id: 'dst_oauth_slow_token', type: 'webhook', url: `http://127.0.0.1:${hanging.port}/hook`, auth }, 800);
      // The call had only what the token request left of the 800 ms; the reason still names the attempt's deadline.
      expect(outcome).toMatchObject({ ok: false, failure: 'timeout', reason: 'time-out: no answer within 800 ms' });
      expect(outcome.durationMs).toBeGreaterThanOrEqual(780);
    } finally {
      await Promise.all([hanging.stop(), slowTokenEndpoint.stop()]);
    }
  });

  it('fails naming the token endpoint when it refuses, without the secret', async () => {
    tokenStatus = 401;
    const outcome = await send(worker(), { ...target(), id: 'dst_oauth_failing' });
    const { host } = new URL(tokenEndpoint.url);
    expect(outcome).toMatchObject({ ok: false, reason: `token endpoint ${host} answered HTTP 401 (invalid_client)` });
    tokenStatus = 200;
  });
});

describe('webhook transport: mTLS', () => {
  const authority = makeCertificateAuthority('mtls');
  const stranger = makeCertificateAuthority('stranger');
  const serverCertificate = authority.issue('localhost', 'server');
  const clientCertificate = authority.issue('destination client', 'client');
  const strangerCertificate = stranger.issue('someone else', 'client');
  credentials.push(clientCertificate.privateKey.split('\n')[1] ?? '', strangerCertificate.privateKey.split('\n')[1] ?? '');
  let server: Server;
  let url = '';
  const seenClients: string[] = [];

  beforeAll(async () => {
    server = createHttpsServer({ key: serverCertificate.privateKey, cert: serverCertificate.certificate, ca: authority.certificate, requestCert: true, rejectUnauthorized: true }, (request, response) => {
      seenClients.push(String((request.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN ?? '?'));
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    authority.dispose();
    stranger.dispose();
  });

  it('presents the destination certificate and trusts its ca', async () => {
    const outcome = await send(worker(), { id: 'dst_mtls', type: 'webhook', url, auth: { type: 'mtls', certificate: clientCertificate.certificate, private_key: clientCertificate.privateKey, ca: authority.certificate } });
    expect(outcome).toMatchObject({ ok: true, status: 204 });
    expect(seenClients).toEqual(['destination client']);
  });

  it('closes a destination pool once unused, and opens a new one for the next send', async () => {
    const quick = testTransports(redis, PREFIX, log, { idleCloseMs: 300 });
    transports.push(quick);
    const mtls = { id: 'dst_mtls_idle', type: 'webhook' as const, url, auth: { type: 'mtls' as const, certificate: clientCertificate.certificate, private_key: clientCertificate.privateKey, ca: authority.certificate } };
    expect(await send(quick, mtls)).toMatchObject({ ok: true });
    expect(quick.clientCertificatePools).toBe(1);
    await waitFor('the unused pool to close', () => quick.clientCertificatePools === 0);
    expect(await send(quick, mtls)).toMatchObject({ ok: true });
    expect(quick.clientCertificatePools).toBe(1);
    seenClients.splice(0);
  });

  it('fails with a certificate the server does not trust, and with none', async () => {
    const wrong = await send(worker(), { id: 'dst_mtls_wrong', type: 'webhook', url, auth: { type: 'mtls', certificate: strangerCertificate.certificate, private_key: strangerCertificate.privateKey, ca: authority.certificate } });
    expect(wrong).toMatchObject({ ok: false, reason: expect.stringContaining('connection failed') });
    const none = await send(worker(), { id: 'dst_mtls_none', type: 'webhook', url, auth: null });
    expect(none.ok).toBe(false);
    expect(seenClients).toEqual([]);
  });

  it('refuses a private key that does not match the certificate, naming no key material', async () => {
    const outcome = await send(worker(), { id: 'dst_mtls_mismatch', type: 'webhook', url, auth: { type: 'mtls', certificate: clientCertificate.certificate, private_key: strangerCertificate.privateKey } });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(/^mtls: the certificate, private_key or ca cannot be used/) });
  });
});

it('writes no credential to a log line or a reason', () => {
  expect(reasons.length).toBeGreaterThan(4);
  expectNoCredential([...log.lines, ...reasons], credentials);
});
