import { Client } from 'pg';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount } from '../support/fixtures';
import { seedPrimaryEvents } from '../support/seeded-events';

/**
 * The event view on the one delivery model (CONTRACT §3, §11, §13): every destination's delivery with
 * its attempts, request bodies rebuilt from the stored message and the attempt's encoding, and the
 * status `expired` listed, filtered and counted. On the run's database and a real config-api.
 */
let configApi: RunningApp;
let db: Client;

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await configApi?.close();
});

async function addDestination(accountId: number, id: string, fields: { format?: string; contentType?: string; paused?: boolean; createdAt: Date }): Promise<void> {
  await db.query(
    `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, paused, signing_secret, created_at)
     VALUES ($1::varchar, $2, 'webhook', 'https://receiver.example/' || $1::varchar, 'https://receiver.example/' || $1::varchar, $3, $4, $5, 'whsec_test', $6)`,
    [id, accountId, fields.contentType ?? 'JSON', fields.format ?? 'udesk', fields.paused ?? false, fields.createdAt],
  );
}

async function addDelivery(seq: string, accountId: number, destinationId: string, status: string, encoding: string | null): Promise<void> {
  await db.query(`INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts) VALUES ($1, $2, $3, $4, $5)`, [
    seq,
    destinationId,
    accountId,
    status,
    encoding === null ? 0 : 1,
  ]);
  if (encoding === null) return;
  await db.query(
    `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status, response_body)
     VALUES ($1, $2::varchar, 0, 1, now(), 7, 'https://receiver.example/' || $2::varchar, '{}', $3, 200, 'ok')`,
    [seq, destinationId, encoding],
  );
}

describe('GET /admin/v1/events/:event_id with several destinations', () => {
  it('lists every delivery, the primary first, a paused one queued without attempts, bodies rebuilt byte for byte from the message', async () => {
    const account = await createAccount(configApi);
    const message = { id: 5, name: 'Zoë', tags: ['a', 'b'] };
    const [event] = await seedPrimaryEvents(db, [{ accountId: account.id, status: 'delivered', message, attempts: 1, deliveredAt: new Date() }]);
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status, response_body)
       VALUES ($1, 'primary', 0, 1, now(), 5, 'https://receiver.example/primary', '{}', 'json', 200, 'ok')`,
      [event.seq],
    );
    await addDestination(account.id, 'held', { paused: true, createdAt: new Date(Date.UTC(2025, 0, 1)) });
    await addDestination(account.id, 'form', { contentType: 'application/x-www-form-urlencoded', createdAt: new Date(Date.UTC(2025, 0, 2)) });
    await addDestination(account.id, 'ce', { format: 'cloudevents', createdAt: new Date(Date.UTC(2025, 0, 3)) });
    await addDelivery(event.seq, account.id, 'ce', 'delivered', 'cloudevents');
    await addDelivery(event.seq, account.id, 'form', 'delivered', 'form');
    await addDelivery(event.seq, account.id, 'held', 'queued', null);

    const view = (await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`)).body;
    expect(view).toMatchObject({ status: 'delivered', attempt_count: 1, message, erased: false });
    expect((view.deliveries as Json[]).map((delivery) => [delivery.destination_id, delivery.status, delivery.attempts.length])).toEqual([
      ['primary', 'delivered', 1],
      ['held', 'queued', 0],
      ['form', 'delivered', 1],
      ['ce', 'delivered', 1],
    ]);
    const body = (destinationId: string): string => (view.deliveries as Json[]).find((delivery) => delivery.destination_id === destinationId)?.attempts[0].request_body;
    expect(view.attempts).toEqual(view.deliveries[0].attempts);
    expect(body('primary')).toBe(`{"action":"Customer_create","message":${JSON.stringify(message)}}`);
    expect(body('form')).toContain('action=Customer_create');
    expect(decodeURIComponent(body('form'))).toContain('Zoë');
    const cloudEvent = JSON.parse(body('ce')) as Json;
    expect(cloudEvent).toMatchObject({ specversion: '1.0', id: event.eventId, type: 'Customer_create', data: message });
    expect(cloudEvent.source).toEqual(expect.stringMatching(/^http/));

    // An erased event's bodies are gone, whatever the attempt stored.
    await db.query(`UPDATE events SET message = 'null'::json, erased = true WHERE seq = $1`, [event.seq]);
    const erased = (await adminCall(configApi, 'GET', `/admin/v1/events/${event.eventId}`)).body;
    expect(erased).toMatchObject({ message: null, erased: true });
    for (const delivery of erased.deliveries as Json[]) for (const attempt of delivery.attempts as Json[]) expect(attempt.request_body).toBe('');
  });
});

describe('status expired (CONTRACT §13)', () => {
  const at = (minute: number) => new Date(Date.UTC(2023, 2, 3, 10, minute, 0));

  it('is listed, filtered by, alone and across accounts within a time range, and counted', async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    const seeded = await seedPrimaryEvents(db, [
      { accountId: account.id, status: 'expired', createdAt: at(0), lastError: 'expired after 1h' },
      { accountId: account.id, status: 'failed', createdAt: at(1) },
      { accountId: account.id, status: 'expired', createdAt: at(2), lastError: 'expired after 1h' },
      { accountId: other.id, status: 'expired', createdAt: at(3), lastError: 'expired after 1h' },
    ]);
    const ofAccount = await adminCall(configApi, 'GET', `/admin/v1/events?account_id=${account.id}&status=expired`);
    expect(ofAccount.status).toBe(200);
    expect((ofAccount.body.items as Json[]).map((item) => item.event_id)).toEqual([seeded[2].eventId, seeded[0].eventId]);
    expect(ofAccount.body.items[0]).toMatchObject({ status: 'expired', last_error: 'expired after 1h' });

    const range = `since=${at(0).toISOString()}&until=${at(10).toISOString()}`;
    const across = await adminCall(configApi, 'GET', `/admin/v1/events?status=expired&${range}&limit=500`);
    expect((across.body.items as Json[]).map((item) => item.event_id)).toEqual(expect.arrayContaining([seeded[3], seeded[2], seeded[0]].map((event) => event.eventId)));
    expect((across.body.items as Json[]).every((item) => item.status === 'expired')).toBe(true);
    // Paged one at a time, the walk over the joined deliveries still yields each once, newest first.
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await adminCall(configApi, 'GET', `/admin/v1/events?account_id=${account.id}&status=expired&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...(page.body.items as Json[]).map((item) => item.event_id as string));
      cursor = page.body.next_cursor as string | null;
    } while (cursor !== null);
    expect(ids).toEqual([seeded[2].eventId, seeded[0].eventId]);

    const stats = await adminCall(configApi, 'GET', `/admin/v1/stats?account_id=${account.id}`);
    expect(stats.body.counts).toEqual({ queued: 0, retrying: 0, delivered: 0, failed: 1, expired: 2, filtered: 0, no_endpoint: 0 });
    const everyAccount = await adminCall(configApi, 'GET', `/admin/v1/stats?since=${at(0).toISOString()}`);
    expect(everyAccount.body.counts.expired).toBeGreaterThanOrEqual(3);
  });
});
