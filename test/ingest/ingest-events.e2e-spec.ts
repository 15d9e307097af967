import { Client } from 'pg';
import { EVENT_ACTIONS, SAMPLE_MESSAGES } from '@app/payloads';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, useApps } from '../support/apps';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { createAccount, INGEST_HEADERS, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { useAppOnHangingRedis } from '../support/hanging-port';
import { primaryDeliveryOf } from '../support/model-deliveries';

/**
 * This suite owns a database and a Redis prefix of its own (both inside the run's namespace, removed
 * afterwards): it asserts on `queued` rows and waiting jobs, which a delivery worker or reconciler
 * started by another suite of the same run would otherwise consume, and it takes its database
 * offline, which must not disturb suites running in parallel.
 */
const namespace = new IsolatedNamespace('ingest');
const ISOLATION = namespace.overrides;
const [FIRST_TOKEN, SECOND_TOKEN] = (process.env.INGEST_TOKEN ?? '').split(',');

/** Response bodies are checked field by field, so they are typed loosely here. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
  elapsedMs: number;
}

let db: Client;
/** The namespace's delivery queue: jobs by id or state across every shard. */
let queue: IsolatedNamespace;
const { configApi, ingest } = useApps({ configApi: ConfigApiModule, ingest: IngestModule }, { namespace });

async function post(app: RunningApp, path: string, body: unknown, headers: Record<string, string> = INGEST_HEADERS): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, elapsedMs: Date.now() - started };
}

function sample(action: (typeof EVENT_ACTIONS)[number]): Record<string, unknown> {
  return structuredClone(SAMPLE_MESSAGES[action]);
}

let uniqueCounter = 0;
function uniqueEventId(label: string): string {
  uniqueCounter += 1;
  return `${label}-${Date.now()}-${uniqueCounter}`;
}

/** The stored event with its primary delivery's state (the event's status as the admin API reports it). */
async function eventRows(eventId: string): Promise<Json[]> {
  const result = await db.query<Json>('SELECT seq::text AS seq, event_id, account_id, action, message, created_at FROM events WHERE event_id = $1', [eventId]);
  const delivery = await primaryDeliveryOf(db, eventId);
  return result.rows.map((row) => ({
    ...row,
    status: delivery?.status,
    attempts: delivery?.attempts,
    series: delivery?.series,
    series_attempts: delivery?.series_attempts,
    next_attempt_at: delivery?.next_attempt_at,
  }));
}

/**
 * An account whose events ingest stores `queued` with a first job: a push URL and every permission
 * (ingest decides at store time; without them the primary's delivery is stored `no_endpoint` or
 * `filtered`, with no job).
 */
async function deliveringAccount(): Promise<TestAccount> {
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: 'http://127.0.0.1:9/ingest-hook', permissions: 'all' });
  return account;
}

async function firstJobOf(seq: string) {
  return queue.getJob(deliveryJobId({ eventSeq: seq, series: 0, attempt: 0 }));
}

/** Every job in the queue for one event, whatever its id: proves "no second delivery". */
async function jobsForEvent(seq: string) {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'paused']);
  return jobs.filter((job) => (job.data as { eventSeq?: string }).eventSeq === seq);
}

async function counterValue(app: RunningApp, outcome: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`ingest_events_total{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

beforeAll(() => {
  db = namespace.db;
  queue = namespace;
});

describe('POST /v1/events', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await deliveringAccount();
  });

  it('answers 202 only once the row is stored, and enqueues the first delivery job', async () => {
    const eventId = uniqueEventId('stored');
    const message = sample('Customer_create');
    const answer = await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_create', message, event_id: eventId });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ event_id: eventId, status: 'accepted' });

    const [row] = await eventRows(eventId);
    expect(row).toMatchObject({
      event_id: eventId,
      account_id: account.id,
      action: 'Customer_create',
      status: 'queued',
      attempts: 0,
      series: 0,
      series_attempts: 0,
    });
    expect(row.message).toEqual(message);
    expect(row.next_attempt_at).toBeInstanceOf(Date);
    expect(Math.abs((row.next_attempt_at as Date).getTime() - Date.now())).toBeLessThan(60_000);

    const job = await firstJobOf(row.seq);
    expect(job).toBeDefined();
    expect(job?.data).toEqual({ eventSeq: row.seq, accountId: row.account_id, series: 0, attempt: 0 });
    expect(job?.name).toBe('deliver');
  });

  it('assigns an event id when none is given', async () => {
    const answer = await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy') });
    expect(answer.status).toBe(202);
    expect(answer.body.event_id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    const [row] = await eventRows(answer.body.event_id);
    expect(row.account_id).toBe(account.id);
    expect(await firstJobOf(row.seq)).toBeDefined();
  });

  it.each(EVENT_ACTIONS.map((action) => [action]))('accepts a valid %s', async (action) => {
    const eventId = uniqueEventId(action);
    const answer = await post(ingest, '/v1/events', { account_id: account.id, action, message: sample(action), event_id: eventId });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ event_id: eventId, status: 'accepted' });
    const [row] = await eventRows(eventId);
    expect(row.action).toBe(action);
    expect(row.message).toEqual(SAMPLE_MESSAGES[action]);
  });

  it('refuses requests without a token or with a wrong one, and accepts every configured token', async () => {
    const body = { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy') };
    const missing = await post(ingest, '/v1/events', body, { 'content-type': 'application/json' });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe('unauthorized');
    const wrong = await post(ingest, '/v1/events', body, { 'content-type': 'application/json', authorization: 'Bearer not-the-token-at-all' });
    expect(wrong.status).toBe(401);
    const batchWithout = await post(ingest, '/v1/events/batch', { events: [body] }, { 'content-type': 'application/json' });
    expect(batchWithout.status).toBe(401);

    expect(SECOND_TOKEN).toBeTruthy();
    for (const token of [FIRST_TOKEN, SECOND_TOKEN]) {
      const answer = await post(ingest, '/v1/events', body, { 'content-type': 'application/json', authorization: `Bearer ${token}` });
      expect(answer.status).toBe(202);
    }
  });

  it('answers 404 for an unknown account and stores nothing', async () => {
    const eventId = uniqueEventId('unknown-account');
    const answer = await post(ingest, '/v1/events', {
      account_id: 2_000_000_000,
      action: 'Customer_destroy',
      message: sample('Customer_destroy'),
      event_id: eventId,
    });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error: 'not_found', message: expect.stringContaining('2000000000') });
    expect(await eventRows(eventId)).toHaveLength(0);
  });

  it.each([
    ['an unknown action', { action: 'Customer_explode' }, 'action'],
    ['a missing account_id', { account_id: undefined }, 'account_id'],
    ['an account_id given as a string', { account_id: '12' }, 'account_id'],
    ['a message that is an array', { message: [1, 2] }, 'message'],
    ['a message that is a string', { message: 'hello' }, 'message'],
    ['a missing message', { message: undefined }, 'message'],
    ['an event_id longer than 128 characters', { event_id: 'e'.repeat(129) }, 'event_id'],
    ['an empty event_id', { event_id: '' }, 'event_id'],
    ['an event_id with a space', { event_id: 'has space' }, 'event_id'],
    ['an event_id with a control character', { event_id: 'line\nbreak' }, 'event_id'],
    ['an unknown top-level field', { extra: true }, 'extra'],
  ])('answers 422 naming the field for %s', async (_label, change, path) => {
    const body = { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), ...change };
    const answer = await post(ingest, '/v1/events', body);
    expect(answer.status).toBe(422);
    expect(answer.body.error).toBe('validation_failed');
    expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path, problem: expect.any(String) })]));
  });

  it('answers 422 with the message field path for a bad message, and stores nothing', async () => {
    const eventId = uniqueEventId('bad-message');
    const message = sample('Customer_create');
    (message.cellphones as { id: unknown }[])[0].id = 'not-a-number';
    const answer = await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_create', message, event_id: eventId });
    expect(answer.status).toBe(422);
    expect(answer.body.error).toBe('validation_failed');
    expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'message.cellphones[0].id' })]));
    for (const detail of answer.body.details as { path: string }[]) expect(detail.path).toMatch(/^message\b/);
    expect(await eventRows(eventId)).toHaveLength(0);
  });

  it('answers 422 naming the field for a NUL character PostgreSQL cannot store, single or in a batch', async () => {
    const eventId = uniqueEventId('nul-single');
    const message = { ...sample('Customer_create'), nick_name: 'a\u0000b' };
    const single = await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_create', message, event_id: eventId });
    expect(single.status).toBe(422);
    expect(single.body.details).toEqual([expect.objectContaining({ path: 'message.nick_name', problem: expect.stringMatching(/NUL/) })]);
    expect(await eventRows(eventId)).toHaveLength(0);

    const [badId, goodId] = [uniqueEventId('nul-batch-bad'), uniqueEventId('nul-batch-good')];
    const batch = await post(ingest, '/v1/events/batch', {
      events: [
        { account_id: account.id, action: 'Customer_create', message, event_id: badId },
        { account_id: account.id, action: 'Customer_create', message: sample('Customer_create'), event_id: goodId },
      ],
    });
    expect(batch.status).toBe(202);
    expect((batch.body.results as Json[]).map((result) => result.status)).toEqual(['rejected', 'accepted']);
    expect(await eventRows(badId)).toHaveLength(0);
    expect(await eventRows(goodId)).toHaveLength(1);
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const big = { account_id: account.id, action: 'Customer_destroy', message: { id: 1, blob: 'x'.repeat(1024 * 1024 + 10) } };
    const single = await post(ingest, '/v1/events', big);
    expect(single.status).toBe(413);
    expect(single.body.error).toBe('payload_too_large');
    const batch = await post(ingest, '/v1/events/batch', { events: [big] });
    expect(batch.status).toBe(413);
  });

  it('answers a repeated event_id with 200 duplicate, storing and enqueueing it once', async () => {
    const eventId = uniqueEventId('dup');
    const body = { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: eventId };
    const first = await post(ingest, '/v1/events', body);
    expect(first.status).toBe(202);
    const again = await post(ingest, '/v1/events', { ...body, message: { id: 999 } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: eventId, status: 'duplicate' });

    const rows = await eventRows(eventId);
    expect(rows).toHaveLength(1);
    expect(rows[0].message).toEqual(SAMPLE_MESSAGES.Customer_destroy);
    expect(await jobsForEvent(rows[0].seq)).toHaveLength(1);
  });

  it('answers 409 when another account already used the event_id', async () => {
    const other = await createAccount(configApi);
    const eventId = uniqueEventId('taken');
    const body = { action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: eventId };
    expect((await post(ingest, '/v1/events', { ...body, account_id: account.id })).status).toBe(202);
    const conflict = await post(ingest, '/v1/events', { ...body, account_id: other.id });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe('conflict');
    const rows = await eventRows(eventId);
    expect(rows).toHaveLength(1);
    expect(rows[0].account_id).toBe(account.id);
  });

  it('counts accepted, duplicate and rejected events in /metrics', async () => {
    const before = {
      accepted: await counterValue(ingest, 'accepted'),
      duplicate: await counterValue(ingest, 'duplicate'),
      rejected: await counterValue(ingest, 'rejected'),
    };
    const eventId = uniqueEventId('metrics');
    const body = { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: eventId };
    await post(ingest, '/v1/events', body);
    await post(ingest, '/v1/events', body);
    await post(ingest, '/v1/events', { ...body, action: 'Nope' });
    await post(ingest, '/v1/events/batch', { events: [{ ...body, event_id: uniqueEventId('metrics') }, { nope: 1 }] });
    expect(await counterValue(ingest, 'accepted')).toBe(before.accepted + 2);
    expect(await counterValue(ingest, 'duplicate')).toBe(before.duplicate + 1);
    expect(await counterValue(ingest, 'rejected')).toBe(before.rejected + 2);
  });
});

describe('POST /v1/events/batch', () => {
  let account: TestAccount;
  let other: TestAccount;
  beforeAll(async () => {
    account = await deliveringAccount();
    other = await createAccount(configApi);
  });

  it('stores the valid items, rejects the others and reports each by index', async () => {
    const storedBefore = uniqueEventId('batch-existing');
    const othersId = uniqueEventId('batch-others');
    expect((await post(ingest, '/v1/events', { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: storedBefore })).status).toBe(202);
    expect((await post(ingest, '/v1/events', { account_id: other.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: othersId })).status).toBe(202);

    const fresh = uniqueEventId('batch-fresh');
    const twice = uniqueEventId('batch-twice');
    const badMessage = sample('Customer_create');
    (badMessage.cellphones as { id: unknown }[])[0].id = 'x';
    const events = [
      { account_id: account.id, action: 'Customer_create', message: sample('Customer_create'), event_id: fresh },
      { account_id: account.id, action: 'Nope', message: {}, event_id: uniqueEventId('bad-action') },
      'not an object',
      { account_id: 2_000_000_000, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: uniqueEventId('no-account') },
      { account_id: account.id, action: 'ImSurveyVote_create', message: sample('ImSurveyVote_create'), event_id: twice },
      { account_id: account.id, action: 'ImSurveyVote_create', message: sample('ImSurveyVote_create'), event_id: twice },
      { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: storedBefore },
      { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: othersId },
      { account_id: account.id, action: 'Customer_create', message: badMessage },
      { account_id: account.id, action: 'AgentNote_update', message: sample('AgentNote_update') },
    ];
    const answer = await post(ingest, '/v1/events/batch', { events });
    expect(answer.status).toBe(202);
    const results = answer.body.results as { index: number; event_id?: string; status: string; details?: { path: string }[] }[];
    expect(results.map((result) => [result.index, result.status])).toEqual([
      [0, 'accepted'],
      [1, 'rejected'],
      [2, 'rejected'],
      [3, 'rejected'],
      [4, 'accepted'],
      [5, 'duplicate'],
      [6, 'duplicate'],
      [7, 'rejected'],
      [8, 'rejected'],
      [9, 'accepted'],
    ]);
    expect(results[0].event_id).toBe(fresh);
    expect(results[1].details).toEqual([expect.objectContaining({ path: 'events[1].action' })]);
    expect(results[2].details).toEqual([expect.objectContaining({ path: 'events[2]' })]);
    expect(results[2].event_id).toBeUndefined();
    expect(results[3].details).toEqual([expect.objectContaining({ path: 'events[3].account_id' })]);
    expect(results[7].details).toEqual([expect.objectContaining({ path: 'events[7].event_id' })]);
    expect(results[8].details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'events[8].message.cellphones[0].id' })]));
    expect(results[9].event_id).toMatch(/^evt_/);

    for (const index of [0, 4, 9]) {
      const rows = await eventRows(results[index].event_id ?? '');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ account_id: account.id, status: 'queued', action: events[index] && (events[index] as { action: string }).action });
      expect(await jobsForEvent(rows[0].seq)).toHaveLength(1);
      expect(await firstJobOf(rows[0].seq)).toBeDefined();
    }
    expect(await eventRows(results[3].event_id ?? '')).toHaveLength(0);
    expect((await eventRows(othersId))[0].account_id).toBe(other.id);
    // The already stored event got no second job.
    expect(await jobsForEvent((await eventRows(storedBefore))[0].seq)).toHaveLength(1);
  });

  it('stores a full batch of 1000 in order', async () => {
    const prefix = uniqueEventId('bulk');
    const events = Array.from({ length: 1000 }, (_, index) => ({
      account_id: account.id,
      action: 'Customer_destroy',
      message: { id: index },
      event_id: `${prefix}-${index}`,
    }));
    const answer = await post(ingest, '/v1/events/batch', { events });
    expect(answer.status).toBe(202);
    expect((answer.body.results as { status: string }[]).every((result) => result.status === 'accepted')).toBe(true);
    const stored = await db.query(
      `SELECT seq::text AS seq, event_id, message FROM events WHERE event_id LIKE $1 || '-%' ORDER BY events.seq`,
      [prefix],
    );
    expect(stored.rows).toHaveLength(1000);
    expect(stored.rows.map((row) => row.event_id)).toEqual(events.map((event) => event.event_id));
    const jobs = await Promise.all([stored.rows[0], stored.rows[999]].map((row) => firstJobOf(row.seq)));
    expect(jobs.every((job) => job !== undefined)).toBe(true);
  });

  it.each([
    ['more than 1000 items', { events: Array.from({ length: 1001 }, () => ({})) }, 'events'],
    ['events that is not an array', { events: { 0: {} } }, 'events'],
    ['no events', {}, 'events'],
    ['an unknown field', { events: [], more: 1 }, 'more'],
  ])('answers 422 for %s', async (_label, body, path) => {
    const answer = await post(ingest, '/v1/events/batch', body);
    expect(answer.status).toBe(422);
    expect(answer.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });
});

describe('when Redis is unreachable', () => {
  // An ingest that waited for Redis before answering would never answer at all (no bound on the answer's time is needed).
  const offline = useAppOnHangingRedis(IngestModule, ISOLATION);

  it('still stores the event and answers 202 without waiting for Redis', async () => {
    const account = await deliveringAccount();
    const eventId = uniqueEventId('no-redis');
    const answer = await post(offline, '/v1/events', {
      account_id: account.id,
      action: 'Customer_destroy',
      message: sample('Customer_destroy'),
      event_id: eventId,
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ event_id: eventId, status: 'accepted' });
    const [row] = await eventRows(eventId);
    expect(row).toMatchObject({ status: 'queued', account_id: account.id });
    expect(row.next_attempt_at).toBeInstanceOf(Date);

    const batch = await post(offline, '/v1/events/batch', {
      events: [{ account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy'), event_id: uniqueEventId('no-redis') }],
    });
    expect(batch.status).toBe(202);
    expect(batch.body.results[0].status).toBe('accepted');
    expect(await eventRows(batch.body.results[0].event_id)).toHaveLength(1);
  });
});

describe('when PostgreSQL is unavailable', () => {
  it('answers 503 quickly, stores nothing, and recovers once the database is back', async () => {
    const account = await createAccount(configApi);
    const body = { account_id: account.id, action: 'Customer_destroy', message: sample('Customer_destroy') };
    expect((await post(ingest, '/v1/events', body)).status).toBe(202); // the pool holds live connections now

    const eventId = uniqueEventId('no-postgres');
    let single: Answer;
    let batch: Answer;
    try {
      await namespace.maintenanceQuery(`ALTER DATABASE "${namespace.databaseName}" ALLOW_CONNECTIONS false`);
      await namespace.maintenanceQuery(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ingest'`,
        [namespace.databaseName],
      );
      single = await post(ingest, '/v1/events', { ...body, event_id: eventId });
      batch = await post(ingest, '/v1/events/batch', { events: [{ ...body, event_id: `${eventId}-batch` }] });
    } finally {
      await namespace.maintenanceQuery(`ALTER DATABASE "${namespace.databaseName}" ALLOW_CONNECTIONS true`);
    }
    for (const answer of [single, batch]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('service_unavailable');
      // A refused connection is answered at once, not after DATABASE_CONNECT_TIMEOUT_MS (10 s by default)
      // of waiting: the bound is the product's own timer, not the machine's speed.
      expect(answer.elapsedMs).toBeLessThan(10_000);
    }
    expect(await eventRows(eventId)).toHaveLength(0);

    const again = await post(ingest, '/v1/events', { ...body, event_id: eventId });
    expect(again.status).toBe(202);
    expect(await eventRows(eventId)).toHaveLength(1);
  });
});
