import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { openStoredSecret } from '../support/stored-secrets';
import { type RunningApp, startApp } from '../support/apps';
import { startTaskWorker } from '../support/task-worker';
import { ADMIN_HEADERS, createAccount, type TestAccount } from '../support/fixtures';
import { type PortalAnswer, portalCall, portalToken } from '../support/portal-client';
import { waitFor } from '@app/testing';

/**
 * The portal API answers for its session's account only (CONTRACT §10): every route is tried with no
 * token, the admin token, a made-up token, and a session of another account holding this one's ids,
 * which must answer exactly as ids that do not exist.
 */
let configApi: RunningApp;
let tasks: RunningApp;
let dataSource: DataSource;
let owner: TestAccount;
let stranger: TestAccount;
let ownerAuth: string;
let strangerAuth: string;
const label = randomUUID();
const ownerEvent = `${label}-owner`;
const strangerEvent = `${label}-stranger`;
let ownerTask: string;

/** An event's series is its primary delivery's. */
const PRIMARY_SERIES = `SELECT d.series FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.event_id = $1`;

async function insertEvent(accountId: number, eventId: string, status: string): Promise<void> {
  // As ingest stores it: its key, the event, its primary delivery (its status) and the book entry.
  await dataSource.query(
    `WITH keyed AS (
       INSERT INTO event_keys (event_id, account_id, event_seq) VALUES ($1, $2, next_event_seq()) RETURNING event_seq
     ),
     inserted AS (
       INSERT INTO events (seq, event_id, account_id, action, message) SELECT event_seq, $1, $2, 'Customer_create', $3::json FROM keyed RETURNING seq, created_at
     ),
     delivering AS (
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series_attempts) SELECT seq, 'primary', $2, $4, 1, 1 FROM inserted
     )
     INSERT INTO book_entries (account_id, created_at, to_status) SELECT $2, created_at, $4 FROM inserted`,
    [eventId, accountId, JSON.stringify({ id: 1, owner_marker: eventId }), status],
  );
}

/** Every portal route, with this account's ids where the route carries one. */
function routes(eventId: string, taskId: string): [string, string, unknown?][] {
  return [
    ['GET', 'settings'],
    ['PUT', 'settings', { push_content_type: 'JSON' }],
    ['POST', 'endpoint/enable'],
    ['POST', 'rotate-secret'],
    ['GET', 'events'],
    ['GET', `events/${eventId}`],
    ['POST', `events/${eventId}/redeliver`],
    ['POST', 'redeliver', { status: 'failed' }],
    ['GET', `redeliver/${taskId}`],
    ['POST', 'test-event', { action: 'Customer_create' }],
    ['GET', 'health'],
  ];
}

/** The answer with the id it names replaced, to compare another account's id with a missing one. */
function withoutId(answer: PortalAnswer, id: string): PortalAnswer {
  return JSON.parse(JSON.stringify(answer).split(id).join('<id>')) as PortalAnswer;
}

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  // config-api only records a bulk redelivery; a worker's task runners run it.
  tasks = await startTaskWorker();
  dataSource = configApi.app.get(DataSource);
  owner = await createAccount(configApi);
  stranger = await createAccount(configApi);
  await insertEvent(owner.id, ownerEvent, 'failed');
  await insertEvent(stranger.id, strangerEvent, 'failed');
  const bulk = await fetch(`${configApi.url}/admin/v1/accounts/${owner.id}/redeliver`, { method: 'POST', headers: ADMIN_HEADERS, body: JSON.stringify({ status: 'delivered' }) });
  ownerTask = ((await bulk.json()) as { task_id: string }).task_id;
  ownerAuth = `Bearer ${await portalToken(configApi, owner.id)}`;
  strangerAuth = `Bearer ${await portalToken(configApi, stranger.id)}`;
});

afterAll(async () => {
  await tasks?.close();
  await configApi?.close();
});

describe('the portal API', () => {
  it.each([
    ['no token', null],
    ['the admin token', ADMIN_HEADERS.authorization],
    ['a made-up token', `Bearer ${'x'.repeat(43)}`],
    ['a Basic header', 'Basic dXNlcjpwYXNz'],
  ])('refuses every route with %s (401), changing nothing', async (_name, authorization) => {
    for (const [method, path, body] of routes(ownerEvent, ownerTask)) {
      const answer = await portalCall(configApi, authorization, method, path, body);
      expect({ method, path, status: answer.status, error: answer.body.error }).toEqual({ method, path, status: 401, error: 'unauthorized' });
    }
    const [row] = await dataSource.query<{ series: number }[]>(PRIMARY_SERIES, [ownerEvent]);
    expect(row.series).toBe(0);
  });

  it("answers another account's event and task ids exactly like missing ones (404)", async () => {
    const missingEvent = `${label}-missing`;
    const missingTask = randomUUID();
    const pairs: [string, string, string, string][] = [
      ['GET', `events/${ownerEvent}`, `events/${missingEvent}`, ownerEvent],
      ['POST', `events/${ownerEvent}/redeliver`, `events/${missingEvent}/redeliver`, ownerEvent],
      ['GET', `redeliver/${ownerTask}`, `redeliver/${missingTask}`, ownerTask],
    ];
    for (const [method, others, missing, id] of pairs) {
      const foreign = await portalCall(configApi, strangerAuth, method, others);
      const absent = await portalCall(configApi, strangerAuth, method, missing);
      expect({ path: others, status: foreign.status }).toEqual({ path: others, status: 404 });
      expect(withoutId(foreign, id)).toEqual(withoutId(absent, missing.split('/')[1]));
    }
    const [row] = await dataSource.query<{ series: number }[]>(PRIMARY_SERIES, [ownerEvent]);
    expect(row.series).toBe(0);
  });

  it('refuses an account_id parameter whatever account it names, so no parameter reaches another account', async () => {
    const foreign = await portalCall(configApi, strangerAuth, 'GET', `events?account_id=${owner.id}`);
    const own = await portalCall(configApi, strangerAuth, 'GET', `events?account_id=${stranger.id}`);
    expect(foreign.status).toBeGreaterThanOrEqual(400);
    expect(foreign.status).toBeLessThan(500);
    expect(foreign).toEqual(own);
    const health = await portalCall(configApi, strangerAuth, 'GET', `health?account_id=${owner.id}`);
    expect(health.status).toBe(own.status);
    const bulk = await portalCall(configApi, strangerAuth, 'POST', 'redeliver', { status: 'failed', account_id: owner.id });
    expect(bulk.status).toBe(422);
  });

  it("lists, reads and redelivers only the session's own events", async () => {
    const list = await portalCall(configApi, strangerAuth, 'GET', 'events');
    expect(list.status).toBe(200);
    const ids = (list.body.items as { event_id: string; account_id: number }[]).map((item) => item.event_id);
    expect(ids).toContain(strangerEvent);
    expect(ids).not.toContain(ownerEvent);
    expect((list.body.items as { account_id: number }[]).every((item) => item.account_id === stranger.id)).toBe(true);

    const detail = await portalCall(configApi, strangerAuth, 'GET', `events/${strangerEvent}`);
    expect(detail.status).toBe(200);
    expect(detail.body.message).toEqual({ id: 1, owner_marker: strangerEvent });

    const started = await portalCall(configApi, strangerAuth, 'POST', 'redeliver', { status: 'failed' });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ task_id: expect.any(String), count: 1 });
    const progress = await waitFor('the bulk redelivery to finish', async () => {
      const answer = await portalCall(configApi, strangerAuth, 'GET', `redeliver/${started.body.task_id as string}`);
      return answer.body.status === 'done' ? answer : false;
    });
    expect(progress.body).toEqual({ id: started.body.task_id, status: 'done', total: 1, done: 1 });
    const rows = await dataSource.query<{ event_id: string; series: number }[]>(`SELECT e.event_id, d.series FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.event_id = ANY($1) ORDER BY e.event_id`, [[ownerEvent, strangerEvent]]);
    expect(rows).toEqual([
      { event_id: ownerEvent, series: 0 },
      { event_id: strangerEvent, series: 1 },
    ]);
  });

  it('changes settings under the Open API rules, storing nothing when a field is wrong', async () => {
    const before = await portalCall(configApi, ownerAuth, 'GET', 'settings');
    expect(before.body).toEqual({
      push_url: null,
      push_content_type: 'application/x-www-form-urlencoded',
      permissions: expect.objectContaining({ customer_create: false }),
      ordering: 'none',
      max_per_second: null,
    });

    const wrong = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { push_content_type: 'JSON', push_url: 'ftp://example.com', permissions: { customer_delete: true } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({
      error: 'invalid_param',
      details: [
        { path: 'push_url', problem: expect.stringContaining('push_url') },
        { path: 'permissions', problem: 'unknown permission key: customer_delete' },
      ],
    });
    const typeWrong = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { push_content_type: 'xml' });
    expect(typeWrong.body.details).toEqual([{ path: 'push_content_type', problem: 'sorry you entered an incorrect value' }]);
    const empty = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { permissions: {} });
    expect(empty.body.details).toEqual([{ path: 'permissions', problem: 'param is missing or the value is empty: permissions' }]);
    const pace = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { ordering: 'subject', max_per_second: 0 });
    expect(pace.status).toBe(400);
    expect(pace.body.details).toEqual([{ path: 'max_per_second', problem: expect.stringContaining('integer from 1 to 10000') }]);
    const unknown = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { account_id: stranger.id });
    expect(unknown.status).toBe(400);
    expect((await portalCall(configApi, ownerAuth, 'GET', 'settings')).body).toEqual(before.body);

    const changed = await portalCall(configApi, ownerAuth, 'PUT', 'settings', { push_content_type: 'json', permissions: { customer_create: true }, ordering: 'subject', max_per_second: 25 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      push_content_type: 'JSON',
      permissions: expect.objectContaining({ customer_create: true, customer_update: false }),
      ordering: 'subject',
      max_per_second: 25,
    });
    const strangers = await portalCall(configApi, strangerAuth, 'GET', 'settings');
    expect(strangers.body).toMatchObject({ push_content_type: 'application/x-www-form-urlencoded', ordering: 'none', max_per_second: null });
  });

  it('rotates the secret of its own account only, and reports health for it', async () => {
    const rotated = await portalCall(configApi, ownerAuth, 'POST', 'rotate-secret');
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    const secrets = await dataSource.query<{ id: number; signing_secret: string }[]>(`SELECT account_id AS id, signing_secret FROM destinations WHERE id = 'primary' AND account_id = ANY($1)`, [[owner.id, stranger.id]]);
    const storedSecretOf = (id: number): string => openStoredSecret(secrets.find((row) => row.id === id)?.signing_secret ?? '');
    expect(storedSecretOf(owner.id)).toBe(rotated.body.signing_secret);
    expect(storedSecretOf(stranger.id)).toBe(stranger.signing_secret);

    const health = await portalCall(configApi, ownerAuth, 'GET', 'health?bucket=1h');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ bucket: '1h', state: { push_url: null, disabled_at: null, endpoint: null } });
    // The last 24 hours: 24 hourly buckets, or 25 when now is not on the hour.
    expect([24, 25]).toContain((health.body.points as unknown[]).length);
    const enabled = await portalCall(configApi, ownerAuth, 'POST', 'endpoint/enable');
    expect(enabled.body).toEqual({ push_url: null, disabled_at: null, disabled_reason: null, endpoint: null });
  });

  it("sends test events for its own account", async () => {
    const sent = await portalCall(configApi, ownerAuth, 'POST', 'test-event', { action: 'ShutQueue_create' });
    expect(sent.status).toBe(202);
    expect(sent.body.event_id).toMatch(/^test_/);
    const [row] = await dataSource.query<{ account_id: number; test: boolean }[]>('SELECT account_id, test FROM events WHERE event_id = $1', [sent.body.event_id]);
    expect(row).toEqual({ account_id: owner.id, test: true });
    const refused = await portalCall(configApi, ownerAuth, 'POST', 'test-event', { action: 'Nope' });
    expect(refused.status).toBe(422);
  });
});
