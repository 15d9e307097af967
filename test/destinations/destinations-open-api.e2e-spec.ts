import type Redis from 'ioredis';
import { Sql } from '@app/persistence/testing';
import { DeliveryQueues, ENVIRONMENT, type Environment, REDIS, RedisKeys, SecretBox } from '@app/runtime';
import { openApiSign } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DestinationSettingsCache } from '../../apps/delivery-worker/src/delivery/destinations/destination-settings.cache';
import { SubjectOrder } from '../../apps/delivery-worker/src/delivery/ordering/subject-order';
import { HeldFeeder } from '../../apps/delivery-worker/src/delivery/holding/held-feeder.service';
import type { Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { newDestinationDefaults } from '../support/destination-steps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { insertDeliveryRows, primaryDestinationOf } from '../support/model-deliveries';
import { signedQuery } from '../support/open-api-client';
import { listenForSettingsChanges } from '../support/settings-changes';
import { openStoredSecret } from '../support/stored-secrets';
import { makeCertificateAuthority } from '../support/test-certificates';
import { waitFor } from '@app/testing';

/*
 * Destinations through the signed Open API (CONTRACT §11, §2): the routes, every validation answer
 * naming its field, credentials never shown back and sealed at rest, and the signature codes.
 * Own database and Redis prefix: the suite reads the jobs resume enqueues.
 */
const namespace = new IsolatedNamespace('destinations-open-api');
const authority = makeCertificateAuthority('destinations-open-api');
const makeTestCertificate = (name = 'client'): { certificate: string; privateKey: string } => authority.issue(name, 'client');

let api: RunningApp;
let strictApi: RunningApp;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

async function call(account: Pick<TestAccount, 'email' | 'open_api_token'>, method: Method, path: string, body?: unknown, query = signedQuery(account), app = api): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${app.url}/open_api_v1/${path}?${query.toString()}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}

const create = (account: TestAccount, body: unknown, app = api): Promise<{ status: number; body: Json }> => call(account, 'POST', 'destinations', body, signedQuery(account), app);

function expect2000(answer: { status: number; body: Json }, text: string | RegExp): void {
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({ code: 2000, message: 'Unknown error' });
  if (typeof text === 'string') expect(answer.body.exception.message).toBe(text);
  else expect(answer.body.exception.message).toMatch(text);
}

beforeAll(async () => {
  await namespace.setUp();
  [api, strictApi] = await Promise.all([startApp(ConfigApiModule, namespace.overrides), startApp(ConfigApiModule, { ...namespace.overrides, ALLOW_PRIVATE_TARGETS: 'false' })]);
});

afterAll(async () => {
  await Promise.all([api?.close(), strictApi?.close()]);
  await namespace.tearDown();
  authority.dispose();
});

const AMQP = 'amqp://callbacks:amqp-pass-7731@127.0.0.1:5672/%2F?exchange=events&routing_key=udesk';
const WEBHOOK = 'https://hooks.example.com/in';

describe('Open API destinations: the routes', () => {
  it('creates, lists (primary first), changes, pauses, resumes and deletes, announcing each change', async () => {
    const account = await createAccount(api);
    const changes = await listenForSettingsChanges(api.environment);
    try {
      const created = await create(account, { type: 'rabbitmq', target: AMQP, actions: ['Customer_create'], filter: { 'organization.id': { $in: [1, 2] } } });
      expect(created.status).toBe(200);
      const destination = created.body.destination as Json;
      expect(created.body).toMatchObject({ code: 1000, message: 'OK' });
      expect(destination).toEqual({
        id: expect.stringMatching(/^dst_[0-9a-f]{24}$/),
        type: 'rabbitmq',
        target: 'amqp://callbacks:***@127.0.0.1:5672/%2F?exchange=events&routing_key=udesk',
        actions: ['Customer_create'],
        filter: { 'organization.id': { $in: [1, 2] } },
        content_type: 'JSON',
        ...newDestinationDefaults(api),
        signing_secret: expect.stringMatching(/^whsec_/),
      });
      await waitFor('the settings-change notice of the creation', () => changes.of(account.id).length >= 1);

      const listed = await call(account, 'GET', 'destinations');
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((item: Json) => item.id)).toEqual(['primary', destination.id]);
      expect(listed.body.items[0]).toMatchObject({ id: 'primary', type: 'webhook', target: null, paused: false });
      expect(listed.body.items[1]).not.toHaveProperty('signing_secret');

      const changed = await call(account, 'PUT', `destinations/${destination.id}`, { format: 'cloudevents', max_per_second: 20, ordering: 'subject', actions: null });
      expect(changed.status).toBe(200);
      expect(changed.body.destination).toMatchObject({ id: destination.id, format: 'cloudevents', max_per_second: 20, ordering: 'subject', actions: null, filter: { 'organization.id': { $in: [1, 2] } } });
      expect(changed.body.destination).not.toHaveProperty('signing_secret');

      expect((await call(account, 'POST', `destinations/${destination.id}/pause`)).body.destination).toMatchObject({ paused: true });
      expect((await call(account, 'POST', `destinations/${destination.id}/resume`)).body.destination).toMatchObject({ paused: false });
      expect((await call(account, 'POST', 'destinations/primary/pause')).body.destination).toMatchObject({ id: 'primary', paused: true });
      // The push URL's pause is the primary destination row's.
      expect((await primaryDestinationOf(namespace.db, account.id))?.paused).toBe(true);
      expect((await call(account, 'POST', 'destinations/primary/resume')).body.destination).toMatchObject({ id: 'primary', paused: false });

      expect(await call(account, 'DELETE', `destinations/${destination.id}`)).toEqual({ status: 200, body: { code: 1000, message: 'OK' } });
      expect((await call(account, 'GET', 'destinations')).body.items.map((item: Json) => item.id)).toEqual(['primary']);
      const [row] = (await namespace.db.query('SELECT deleted_at FROM destinations WHERE id = $1', [destination.id])).rows;
      expect(row.deleted_at).not.toBeNull();
      // create, put, pause, resume, primary pause and resume, delete: one notice each.
      await waitFor('a notice per change', () => changes.of(account.id).length >= 7);
    } finally {
      changes.close();
    }
  });

  it('answers 404 (code 2000) for an unknown, deleted or other account’s id, refuses a PUT of the primary with a field it does not take, and its DELETE', async () => {
    const [account, other] = await Promise.all([createAccount(api), createAccount(api)]);
    const theirs = (await create(other, { type: 'webhook', target: WEBHOOK })).body.destination.id as string;
    for (const [method, path] of [
      ['PUT', `destinations/${theirs}`],
      ['DELETE', `destinations/${theirs}`],
      ['POST', `destinations/${theirs}/pause`],
      ['POST', 'destinations/dst_000000000000000000000000/resume'],
      ['DELETE', `destinations/${encodeURIComponent('bad\u0000id')}`],
    ] as const) {
      const answer = await call(account, method, path, method === 'PUT' ? { format: 'udesk' } : undefined);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: 2000, exception: { message: expect.stringMatching(/^id: destination .* does not exist$/) } });
    }
    // CONTRACT §13: the primary's PUT takes exactly retry, expire_after, ordering and max_per_second; any other field is 2000 naming it.
    expect2000(await call(account, 'PUT', 'destinations/primary', { format: 'udesk' }), 'format: is not a field the primary destination takes here (retry, expire_after, ordering, max_per_second)');
    expect2000(await call(account, 'DELETE', 'destinations/primary'), /^id: the primary destination cannot be deleted/);
  });

  it('resume lets every held delivery of the destination go back to the queue (the workers\' feeder), and delete fails the waiting ones', async () => {
    const account = await createAccount(api);
    const id = (await create(account, { type: 'webhook', target: WEBHOOK })).body.destination.id as string;
    await call(account, 'POST', `destinations/${id}/pause`);
    // What a paused destination leaves behind: pending deliveries held without a job (the worker's part).
    await insertDeliveryRows(namespace.db, [
      { seq: '9000001', destinationId: id, accountId: account.id, status: 'queued', held: 'paused', lastError: 'paused' },
      { seq: '9000003', destinationId: id, accountId: account.id, status: 'retrying', series: 1, seriesAttempts: 2, attempts: 3, held: 'paused', lastError: 'paused' },
      { seq: '9000002', destinationId: id, accountId: account.id, status: 'delivered', seriesAttempts: 1, attempts: 1 },
    ]);
    expect((await call(account, 'POST', `destinations/${id}/resume`)).body.destination).toMatchObject({ paused: false, state: { held: 2 } });
    // Resume only lifts the pause; a worker's feeder (every second) finds it lifted and sends every held delivery back.
    expect(await namespace.getJob(`e9000001-d${id}-s0-a0`)).toBeUndefined();
    expect(await feedHeldOnce()).toMatchObject({ released: 2 });
    const first = await namespace.getJob(`e9000001-d${id}-s0-a0`);
    const second = await namespace.getJob(`e9000003-d${id}-s1-a2`);
    expect(first?.data).toEqual({ eventSeq: '9000001', accountId: account.id, series: 0, attempt: 0, destinationId: id });
    expect(second?.data).toMatchObject({ eventSeq: '9000003', destinationId: id });
    expect(await namespace.getJob(`e9000002-d${id}-s0-a1`)).toBeUndefined();
    // No longer held, and due now: the reconciler finds them should their jobs be lost.
    const rows = (await namespace.db.query('SELECT event_seq::text AS seq, held, due_at FROM open_deliveries WHERE destination_id = $1 ORDER BY event_seq', [id])).rows;
    expect(rows.map((row) => [row.seq, row.held])).toEqual([['9000001', null], ['9000003', null]]);
    expect(rows.every((row) => row.due_at !== null)).toBe(true);

    expect((await call(account, 'DELETE', `destinations/${id}`)).status).toBe(200);
    const ended = (await namespace.db.query('SELECT event_seq::text AS seq, status, last_error FROM deliveries WHERE destination_id = $1 ORDER BY event_seq', [id])).rows;
    expect(ended).toEqual([
      { seq: '9000001', status: 'failed', last_error: 'destination deleted' },
      { seq: '9000002', status: 'delivered', last_error: null },
      { seq: '9000003', status: 'failed', last_error: 'destination deleted' },
    ]);
  });
});

/**
 * One look of the workers' HeldFeeder (CONTRACT §11: after resume, what waited goes in accepted order),
 * built from this app's connections: no worker runs here, so the jobs it adds stay in the queue to be read.
 */
async function feedHeldOnce(): Promise<{ released: number; expired: number }> {
  const environment = api.app.get<Environment>(ENVIRONMENT);
  const keys = api.app.get(RedisKeys);
  const sql = api.app.get(Sql);
  const cache = new DestinationSettingsCache(sql, environment, api.app.get(SecretBox), keys);
  const queues = api.app.get(DeliveryQueues, { strict: false });
  const redis = api.app.get<Redis>(REDIS);
  const feeder = new HeldFeeder(sql, queues, cache, new SubjectOrder(sql, queues, redis, keys, environment), redis, keys, environment);
  return feeder.feedOnce();
}

describe('Open API destinations: validation (code 2000 naming the field, nothing stored)', () => {
  const certificate = makeTestCertificate();
  const otherCertificate = makeTestCertificate('another');
  it.each<[string, unknown, string | RegExp]>([
    ['no body fields', {}, 'type: is required; target: is required'],
    ['a bad type', { type: 'kafka', target: WEBHOOK }, 'type: must be "webhook", "rabbitmq", "nats", "mqtt"'],
    ['an unknown field', { type: 'webhook', target: WEBHOOK, colour: 'red' }, /^colour: is not a destination field/],
    ['a webhook target that is not http(s)', { type: 'webhook', target: 'ftp://files.example.com/x' }, 'target: must use http or https'],
    ['a webhook target with credentials', { type: 'webhook', target: 'https://u:p@hooks.example.com/' }, 'target: must not contain credentials'],
    ['a rabbitmq target over http', { type: 'rabbitmq', target: WEBHOOK }, /^target: must be amqp\(s\):\/\//],
    ['a rabbitmq target without exchange', { type: 'rabbitmq', target: 'amqp://mq.example.com/?routing_key=k' }, 'target: must carry exactly one exchange query parameter'],
    ['a rabbitmq target without routing_key', { type: 'rabbitmq', target: 'amqp://mq.example.com/?exchange=x' }, 'target: must carry exactly one routing_key query parameter'],
    ['a nats target without subject', { type: 'nats', target: 'nats://nats.example.com:4222' }, /^target: must name the subject/],
    ['a nats wildcard subject', { type: 'nats', target: 'nats://nats.example.com:4222/events.>' }, /^target: subject must not contain/],
    ['an mqtt target without topic', { type: 'mqtt', target: 'mqtt://broker.example.com:1883/' }, /^target: must name the topic/],
    ['an mqtt wildcard topic', { type: 'mqtt', target: 'mqtt://broker.example.com/a/+/b' }, 'target: topic must not contain wildcards (+ #)'],
    ['an mqtt target over amqp', { type: 'mqtt', target: AMQP }, /^target: must be mqtt\(s\):\/\//],
    ['unknown actions', { type: 'webhook', target: WEBHOOK, actions: ['Customer_eat'] }, /^actions: "Customer_eat" is not an action/],
    ['empty actions', { type: 'webhook', target: WEBHOOK, actions: [] }, /^actions: must be a non-empty array/],
    ['filter $where', { type: 'webhook', target: WEBHOOK, filter: { $where: 'this.id > 1' } }, 'filter: operator $where is not allowed'],
    ['filter $regex', { type: 'webhook', target: WEBHOOK, filter: { name: { $regex: '^A' } } }, 'filter: operator $regex is not allowed'],
    ['filter $in not an array', { type: 'webhook', target: WEBHOOK, filter: { id: { $in: 3 } } }, 'filter: $in of "id" must be an array of values'],
    ['a bad content_type', { type: 'webhook', target: WEBHOOK, content_type: 'xml' }, /^content_type: must be "JSON" or/],
    ['a form body to a broker', { type: 'nats', target: 'nats://n.example.com/s', content_type: 'application/x-www-form-urlencoded' }, /^content_type: must be "JSON" for a broker/],
    ['a bad format', { type: 'webhook', target: WEBHOOK, format: 'avro' }, 'format: must be "udesk" or "cloudevents"'],
    ['auth on a broker', { type: 'rabbitmq', target: AMQP, auth: { type: 'header', name: 'X-Key', value: 'v' } }, /^auth: is for webhooks only/],
    ['a webhook-* auth header', { type: 'webhook', target: WEBHOOK, auth: { type: 'header', name: 'Webhook-Signature', value: 'v' } }, /^auth\.name: must not be a webhook-\* header/],
    ['a hop-by-hop auth header', { type: 'webhook', target: WEBHOOK, auth: { type: 'header', name: 'Connection', value: 'close' } }, /^auth\.name: must not be connection/],
    ['an auth header value with a line break', { type: 'webhook', target: WEBHOOK, auth: { type: 'header', name: 'X-Key', value: 'a\r\nX-Evil: 1' } }, /^auth\.value: must not contain line breaks/],
    ['an unknown auth type', { type: 'webhook', target: WEBHOOK, auth: { type: 'basic' } }, 'auth.type: must be "header", "oauth2" or "mtls"'],
    ['an oauth2 token_url that is not http(s)', { type: 'webhook', target: WEBHOOK, auth: { type: 'oauth2', token_url: 'ftp://auth.example.com', client_id: 'c', client_secret: 's' } }, 'auth.token_url: must use http or https'],
    ['oauth2 without client_secret', { type: 'webhook', target: WEBHOOK, auth: { type: 'oauth2', token_url: 'https://auth.example.com/t', client_id: 'c' } }, 'auth.client_secret: must be a non-empty string'],
    ['a certificate that is not PEM', { type: 'webhook', target: WEBHOOK, auth: { type: 'mtls', certificate: 'not a certificate', private_key: certificate.privateKey } }, /^auth\.certificate: must be a PEM certificate/],
    ['a private key that is not PEM', { type: 'webhook', target: WEBHOOK, auth: { type: 'mtls', certificate: certificate.certificate, private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' } }, /^auth\.private_key: must be an unencrypted PEM private key/],
    ['a key of another certificate', { type: 'webhook', target: WEBHOOK, auth: { type: 'mtls', certificate: certificate.certificate, private_key: otherCertificate.privateKey } }, 'auth.private_key: does not belong to the certificate'],
    ['mtls to an http target', { type: 'webhook', target: 'http://hooks.example.com/in', auth: { type: 'mtls', certificate: certificate.certificate, private_key: certificate.privateKey } }, 'auth: mtls needs an https:// target'],
    ['a bad max_per_second', { type: 'webhook', target: WEBHOOK, max_per_second: 0 }, 'max_per_second: must be an integer from 1 to 10000, or null for no limit'],
    ['a bad ordering', { type: 'webhook', target: WEBHOOK, ordering: 'fifo' }, 'ordering: must be "none" or "subject"'],
    ['a NUL character', { type: 'webhook', target: 'https://hooks.example.com/\u0000' }, /^target:? must not contain the NUL character/],
  ])('refuses %s', async (_case, body, text) => {
    const account = await createAccount(api);
    expect2000(await create(account, body), text);
    // Every account has its primary row from its creation: nothing else was stored.
    const stored = await namespace.db.query(`SELECT 1 FROM destinations WHERE account_id = $1 AND id <> 'primary'`, [account.id]);
    expect(stored.rowCount).toBe(0);
  });

  it.each([
    ['a webhook to a loopback address', { type: 'webhook', target: 'http://127.0.0.1:8080/in' }, 'target'],
    ['a webhook to a name resolving to loopback', { type: 'webhook', target: 'http://localhost/in' }, 'target'],
    ['rabbitmq on a private network', { type: 'rabbitmq', target: 'amqp://u:p@10.1.2.3:5672/?exchange=e&routing_key=k' }, 'target'],
    ['rabbitmq on an IPv4 written short', { type: 'rabbitmq', target: 'amqp://127.1/?exchange=e&routing_key=k' }, 'target'],
    ['nats on loopback by name', { type: 'nats', target: 'nats://localhost:4222/events' }, 'target'],
    ['mqtt on IPv6 loopback', { type: 'mqtt', target: 'mqtt://[::1]:1883/events' }, 'target'],
    ['mqtt on a host that does not resolve', { type: 'mqtt', target: 'mqtt://no-such-host.invalid/events' }, 'target'],
    ['an oauth2 token_url on a private address', { type: 'webhook', target: 'https://93.184.215.14/in', auth: { type: 'oauth2', token_url: 'http://192.168.1.10/token', client_id: 'c', client_secret: 's' } }, 'auth.token_url'],
  ])('refuses %s when private targets are not allowed, naming no address', async (_case, body, field) => {
    const account = await createAccount(strictApi);
    const answer = await create(account, body, strictApi);
    expect2000(answer, `${field}: points to a non-public address or to a host that does not resolve`);
  });

  it('refuses the 21st destination', async () => {
    const account = await createAccount(api);
    for (let index = 0; index < 20; index += 1) {
      expect((await create(account, { type: 'webhook', target: `${WEBHOOK}/${index}` })).status).toBe(200);
    }
    expect2000(await create(account, { type: 'webhook', target: WEBHOOK }), 'destinations: an account has at most 20 destinations besides the primary');
    const [{ count }] = (await namespace.db.query(`SELECT count(*)::int AS count FROM destinations WHERE account_id = $1 AND id <> 'primary'`, [account.id])).rows;
    expect(count).toBe(20);
  });

  it('checks a PUT against the stored settings: a new type needs a target, auth stays for webhooks', async () => {
    const account = await createAccount(api);
    const id = (await create(account, { type: 'webhook', target: WEBHOOK, auth: { type: 'header', name: 'X-Key', value: 'k' } })).body.destination.id as string;
    expect2000(
      await call(account, 'PUT', `destinations/${id}`, { type: 'nats' }),
      'target: must be sent with the new type (a nats target); auth: is for webhooks only (brokers take credentials in the target URL)',
    );
    expect2000(await call(account, 'PUT', `destinations/${id}`, { type: 'nats', target: 'nats://n.example.com/s' }), /^auth: is for webhooks only/);
    const moved = await call(account, 'PUT', `destinations/${id}`, { type: 'nats', target: 'nats://n.example.com:4222/s', auth: null });
    expect(moved.body.destination).toMatchObject({ type: 'nats', target: 'nats://n.example.com:4222/s', auth: null });
  });
});

describe('Open API destinations: credentials', () => {
  it('never shows a password, header value, client secret or private key back, and seals them at rest', async () => {
    const account = await createAccount(api);
    const { certificate, privateKey } = makeTestCertificate();
    const secrets = ['amqp-pass-7731', 'header-value-5521', 'client-secret-9004', 'nats-token-1188'];
    const answers: Json[] = [];
    const rabbit = await create(account, { type: 'rabbitmq', target: AMQP });
    const header = await create(account, { type: 'webhook', target: WEBHOOK, auth: { type: 'header', name: 'X-Api-Key', value: 'header-value-5521' } });
    const oauth = await create(account, { type: 'webhook', target: WEBHOOK, auth: { type: 'oauth2', token_url: 'https://auth.example.com/token', client_id: 'cid', client_secret: 'client-secret-9004', scope: 's' } });
    const mtls = await create(account, { type: 'webhook', target: WEBHOOK, auth: { type: 'mtls', certificate, private_key: privateKey } });
    const nats = await create(account, { type: 'nats', target: 'nats://nats-token-1188@nats.example.com:4222/events' });
    answers.push(rabbit.body, header.body, oauth.body, mtls.body, nats.body);
    expect([header, oauth, mtls].map((answer) => answer.body.destination.auth)).toEqual([{ type: 'header' }, { type: 'oauth2' }, { type: 'mtls' }]);
    expect(nats.body.destination.target).toBe('nats://***@nats.example.com:4222/events');
    answers.push((await call(account, 'GET', 'destinations')).body);
    answers.push((await call(account, 'PUT', `destinations/${oauth.body.destination.id}`, { max_per_second: 5 })).body);
    const text = JSON.stringify(answers);
    for (const secret of [...secrets, privateKey.split('\n')[1]]) expect(text).not.toContain(secret);

    const rows = (
      await namespace.db.query(`SELECT id, target, target_shown, auth, signing_secret FROM destinations WHERE account_id = $1 AND id <> 'primary' ORDER BY created_at`, [account.id])
    ).rows as { id: string; target: string; target_shown: string; auth: string | null; signing_secret: string }[];
    const stored = JSON.stringify(rows);
    for (const secret of [...secrets, privateKey.split('\n')[1]]) expect(stored).not.toContain(secret);
    for (const row of rows) {
      expect(row.target.startsWith('gcm1:')).toBe(true);
      expect(row.signing_secret.startsWith('gcm1:')).toBe(true);
    }
    expect(openStoredSecret(rows[0].target)).toBe(AMQP);
    expect(openStoredSecret(rows[0].signing_secret)).toBe(rabbit.body.destination.signing_secret);
    expect(JSON.parse(openStoredSecret(rows[2].auth ?? ''))).toEqual({ type: 'oauth2', token_url: 'https://auth.example.com/token', client_id: 'cid', client_secret: 'client-secret-9004', scope: 's' });
    expect(JSON.parse(openStoredSecret(rows[3].auth ?? ''))).toMatchObject({ type: 'mtls', private_key: privateKey });
  });
});

describe('Open API destinations: signing (CONTRACT §2)', () => {
  it('answers the signature codes on every destinations route', async () => {
    const account = await createAccount(api);
    const signed = (mutate: (query: URLSearchParams) => void): URLSearchParams => {
      const query = signedQuery(account);
      mutate(query);
      return query;
    };
    const resign = (timestamp: string, nonce: string, token = account.open_api_token): string => openApiSign({ email: account.email, openApiToken: token, timestamp, nonce });
    const cases: [URLSearchParams, number][] = [
      [new URLSearchParams(), 2059],
      [signed((query) => query.set('sign', '0'.repeat(64))), 2059],
      [signed((query) => query.set('sign', resign(query.get('timestamp') ?? '', query.get('nonce') ?? '', 'wrong-token'))), 2059],
      [signed((query) => query.set('sign_version', 'v1')), 2059],
      [signed((query) => query.delete('timestamp')), 20621],
      [signed((query) => { const old = String(Math.floor(Date.now() / 1000) - 3600); query.set('timestamp', old); query.set('sign', resign(old, query.get('nonce') ?? '')); }), 20622],
      [signed((query) => query.set('nonce', '')), 20624],
    ];
    for (const [query, code] of cases) {
      const answer = await call(account, 'POST', 'destinations', { type: 'webhook', target: WEBHOOK }, query);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 401, code });
    }
    // Every other route behind the same guard (a few failures only: 20 a minute would start the failed-authentication limit).
    for (const [method, path, body] of [
      ['GET', 'destinations', undefined],
      ['PUT', 'destinations/dst_000000000000000000000000', { format: 'udesk' }],
      ['DELETE', 'destinations/dst_000000000000000000000000', undefined],
      ['POST', 'destinations/primary/pause', undefined],
      ['POST', 'destinations/primary/resume', undefined],
    ] as const) {
      const answer = await call(account, method, path, body, signed((query) => query.set('sign', '0'.repeat(64))));
      expect({ path, method, status: answer.status, code: answer.body.code }).toEqual({ path, method, status: 401, code: 2059 });
    }
    const query = signedQuery(account);
    expect((await call(account, 'GET', 'destinations', undefined, query)).status).toBe(200);
    expect((await call(account, 'GET', 'destinations', undefined, query)).body.code).toBe(20623);
    expect((await namespace.db.query(`SELECT 1 FROM destinations WHERE account_id = $1 AND id <> 'primary'`, [account.id])).rowCount).toBe(0);
  });
});
