import { Client } from 'pg';
import { deliveryJobId } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import type { NewEvent } from '../../apps/ingest/src/events/event-store.service';
import { GroupCommitService } from '../../apps/ingest/src/events/group-commit.service';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { createAccount, INGEST_HEADERS, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { SAMPLE_MESSAGES } from '@app/payloads';

/**
 * Concurrent single-event requests share one INSERT (GroupCommitService). Each must still get the
 * answer it would have got alone, and only after its own row is committed. Own database and Redis
 * prefix: the suite counts rows and jobs.
 */
const namespace = new IsolatedNamespace('ingest-group');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let configApi: RunningApp;
let ingest: RunningApp;
let db: Client;
let first: TestAccount;
let second: TestAccount;

async function post(body: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Json };
}

function event(accountId: number, eventId: string, id = 1): NewEvent {
  return { accountId, eventId, action: 'Customer_destroy', message: { ...SAMPLE_MESSAGES.Customer_destroy, id } };
}

function groupCommit(): GroupCommitService {
  return ingest.app.get(GroupCommitService);
}

function destroy(accountId: number, eventId: string, id = 1): Json {
  return { account_id: accountId, action: 'Customer_destroy', message: { ...SAMPLE_MESSAGES.Customer_destroy, id }, event_id: eventId };
}

async function rowsOf(eventIds: string[]): Promise<Json[]> {
  const result = await db.query<Json>(
    'SELECT seq::text AS seq, event_id, account_id, message, xmin::text AS xmin FROM events WHERE event_id = ANY($1::varchar[]) ORDER BY events.seq',
    [eventIds],
  );
  return result.rows;
}

beforeAll(async () => {
  await namespace.setUp();
  db = namespace.db;
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  ingest = await startApp(IngestModule, namespace.overrides);
  first = await createAccount(configApi);
  second = await createAccount(configApi);
  // Ingest decides each delivery as it stores the event: with a push URL and the permission, the
  // primary's is stored `queued` and gets its first job (without them, no job is due).
  for (const account of [first, second]) {
    await setCallbackSettings(configApi.app, account.id, { pushUrl: 'http://127.0.0.1:9/group-hook', permissions: 'all' });
  }
});

afterAll(async () => {
  await ingest?.close();
  await configApi?.close();
  await namespace.tearDown();
});

describe('concurrent POST /v1/events', () => {
  it('stores many requests with fewer statements, answering each 202 with its row committed and its job queued', async () => {
    const label = `group-${Date.now()}`;
    const bodies = Array.from({ length: 80 }, (_, index) => destroy(index % 2 ? first.id : second.id, `${label}-${index}`, index + 1));
    const answers = await Promise.all(bodies.map((body) => post(body)));

    answers.forEach((answer, index) => {
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual({ event_id: bodies[index].event_id, status: 'accepted' });
    });
    const rows = await rowsOf(bodies.map((body) => body.event_id as string));
    expect(rows).toHaveLength(80);
    for (const row of rows) {
      const body = bodies.find((candidate) => candidate.event_id === row.event_id);
      expect(row.account_id).toBe(body?.account_id);
      expect(row.message).toEqual(body?.message);
      const job = await namespace.getJob(deliveryJobId({ eventSeq: row.seq, series: 0, attempt: 0 }));
      expect(job?.data).toEqual({ eventSeq: row.seq, accountId: row.account_id, series: 0, attempt: 0 });
    }
    // Rows written by one statement share its transaction id: fewer transactions than requests means grouped commits.
    expect(new Set(rows.map((row) => row.xmin)).size).toBeLessThan(80);
  });

  it('gives each event of one group the outcome it would have had alone', async () => {
    const label = `mixed-${Date.now()}`;
    const events = [
      event(first.id, `${label}-same`, 1),
      event(first.id, `${label}-same`, 2),
      event(second.id, `${label}-same`, 3),
      event(2_000_000_000, `${label}-nobody`),
      event(second.id, `${label}-fine`),
    ];
    // Handed over in one turn of the event loop, so they share one statement, in this order.
    const outcomes = await Promise.all(events.map((one) => groupCommit().commit(one)));

    // The first of two equal ids claims it, like separate requests would; another account's use of it is a conflict.
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['accepted', 'duplicate', 'conflict', 'unknown_account', 'accepted']);
    const rows = await rowsOf([`${label}-same`, `${label}-nobody`, `${label}-fine`]);
    expect(rows.map((row) => [row.event_id, row.account_id, row.message.id])).toEqual([
      [`${label}-same`, first.id, 1],
      [`${label}-fine`, second.id, 1],
    ]);
    expect(new Set(rows.map((row) => row.xmin)).size).toBe(1);
    for (const row of rows) expect(await namespace.getJob(deliveryJobId({ eventSeq: row.seq, series: 0, attempt: 0 }))).toBeDefined();
  });

  it('fails only the event the database refuses, not the others grouped with it', async () => {
    const label = `refused-${Date.now()}`;
    // An id longer than the column fails the grouped statement as a whole (through HTTP the envelope
    // check stops such ids; a message holding \u0000, which jsonb cannot store, is one that gets here).
    const refused: NewEvent = event(first.id, `${label}-${'x'.repeat(200)}`);
    const good = Array.from({ length: 20 }, (_, index) => event(second.id, `${label}-${index}`));
    const settled = await Promise.allSettled([refused, ...good].map((one) => groupCommit().commit(one)));

    expect(settled[0].status).toBe('rejected');
    expect(settled.slice(1).map((result) => (result.status === 'fulfilled' ? result.value.kind : result.reason))).toEqual(
      good.map(() => 'accepted'),
    );
    expect(await rowsOf([refused.eventId])).toHaveLength(0);
    expect(await rowsOf(good.map((one) => one.eventId))).toHaveLength(20);
  });
});
