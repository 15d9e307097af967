import { randomBytes } from 'node:crypto';
import { connect } from 'amqplib';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { firstDeliveryStep, readSecretsKeys, SecretBox } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall } from '../support/admin-client';
import { useApps } from '../support/apps';
import { storeEventsFor } from '../support/deliveries';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';
import { waitFor } from '@app/testing';
import { announceSettingsChange, deliveryQueueOf, eventRows, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('destinations-delivery');
jest.setTimeout(60_000);

const secrets = new SecretBox(readSecretsKeys({ SECRETS_KEY: process.env.SECRETS_KEY }, false, []));

interface TestDestination {
  id: string;
  secret: string;
  receiver: TestReceiver;
}

/** A destination row's columns a test sets, beyond the ones every webhook destination here has. */
interface DestinationFields {
  type?: 'webhook' | 'rabbitmq';
  format?: 'udesk' | 'cloudevents';
  actions?: string[] | null;
  filter?: Record<string, unknown> | null;
  paused?: boolean;
  ordering?: 'none' | 'subject';
  failing_since?: Date | null;
}

interface DeliveryRow {
  event_id: string;
  destination_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function verified(request: ReceivedRequest, secret: string): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': header(request, 'webhook-id'),
    'webhook-timestamp': header(request, 'webhook-timestamp'),
    'webhook-signature': header(request, 'webhook-signature'),
  });
}

describe('deliveries to extra destinations (CONTRACT §11)', () => {
  const { configApi, ingest, worker } = useApps({
    configApi: ConfigApiModule,
    ingest: IngestModule,
    worker: [DeliveryWorkerModule, { RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s', DELIVERY_TIMEOUT_MS: '1000', RECONCILE_INTERVAL: '1s', WORKER_CONCURRENCY: '16' }],
  });
  let dataSource: DataSource;
  const receivers: TestReceiver[] = [];
  let counter = 0;

  async function receiver(): Promise<TestReceiver> {
    const started = await new TestReceiver().start();
    receivers.push(started);
    return started;
  }

  async function accountWithPrimary(): Promise<{ account: TestAccount; primary: TestReceiver }> {
    const account = await createAccount(configApi);
    const primary = await receiver();
    await setCallbackSettings(worker.app, account.id, { pushUrl: primary.url, contentType: 'JSON', permissions: 'all' });
    return { account, primary };
  }

  /** A destination row as config-api writes it: its target and secret sealed, then announced (ingest's and the worker's caches). */
  async function insertDestination(accountId: number, target: string, targetShown: string, secret: string, fields: DestinationFields): Promise<string> {
    const id = `dst_${randomBytes(12).toString('hex')}`;
    const row = { type: 'webhook', format: 'udesk', actions: null, filter: null, paused: false, ordering: 'none', failing_since: null, ...fields };
    await dataSource.query(
      `INSERT INTO destinations (id, account_id, type, format, target, target_shown, signing_secret, actions, filter, paused, ordering, failing_since)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::jsonb, $10, $11, $12)`,
      [
        id,
        accountId,
        row.type,
        row.format,
        secrets.seal(target),
        targetShown,
        secrets.seal(secret),
        row.actions,
        row.filter === null ? null : JSON.stringify(row.filter),
        row.paused,
        row.ordering,
        row.failing_since,
      ],
    );
    await announceSettingsChange(worker.app, accountId);
    return id;
  }

  /** A webhook destination on a receiver of its own (or `target`), with a signing secret of its own. */
  async function addDestination(accountId: number, fields: DestinationFields = {}, target?: TestReceiver): Promise<TestDestination> {
    const hook = target ?? (await receiver());
    const secret = generateSigningSecret();
    const id = await insertDestination(accountId, hook.url, hook.url, secret, fields);
    return { id, secret, receiver: hook };
  }

  /** POST /admin/v1/accounts/:id/destinations/:destination_id/<action> (the primary included). */
  async function destinationAction(accountId: number, destinationId: string, action: 'pause' | 'resume'): Promise<void> {
    const answer = await adminCall(configApi, 'POST', `/admin/v1/accounts/${accountId}/destinations/${destinationId}/${action}`);
    expect(answer.status).toBe(200);
  }

  async function post(accountId: number, action: keyof typeof SAMPLE_MESSAGES, message: Record<string, unknown>): Promise<string> {
    counter += 1;
    const eventId = `dest-${process.pid}-${Date.now().toString(36)}-${counter}`;
    const response = await fetch(`${ingest.url}/v1/events`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({ event_id: eventId, account_id: accountId, action, message }),
    });
    expect(response.status).toBe(202);
    return eventId;
  }

  /** Every delivery of these events, the primary's included, in accepted order. */
  async function deliveries(eventIds: string[]): Promise<DeliveryRow[]> {
    return dataSource.query<DeliveryRow[]>(
      `SELECT e.event_id, d.destination_id, d.status, d.attempts, d.next_attempt_at, d.last_error
         FROM deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE e.event_id = ANY($1::varchar[]) ORDER BY d.event_seq, d.destination_id`,
      [eventIds],
    );
  }

  /** Their deliveries to one destination. */
  async function deliveriesTo(eventIds: string[], destinationId: string): Promise<DeliveryRow[]> {
    return (await deliveries(eventIds)).filter((row) => row.destination_id === destinationId);
  }

  /**
   * Until every delivery of these events to the destination is held by its pause: no job, no attempt, no
   * due time, only its open row saying why it waits (the feeder finds it there on resume).
   */
  async function parked(eventIds: string[], destinationId: string): Promise<DeliveryRow[]> {
    return waitFor(`the deliveries to ${destinationId} to be parked`, async () => {
      const rows = await dataSource.query<(DeliveryRow & { held: string | null })[]>(
        `SELECT e.event_id, d.destination_id, d.status, d.attempts, d.next_attempt_at, d.last_error, o.held
           FROM deliveries d JOIN events e ON e.seq = d.event_seq
           LEFT JOIN open_deliveries o ON o.event_seq = d.event_seq AND o.destination_id = d.destination_id
          WHERE e.event_id = ANY($1::varchar[]) AND d.destination_id = $2 ORDER BY d.event_seq`,
        [eventIds, destinationId],
      );
      return rows.length === eventIds.length && rows.every((row) => row.held === 'paused' && row.next_attempt_at === null) ? rows : undefined;
    });
  }

  /** How many deliveries the destination still holds for its pause (0 once the feeder has sent them back). */
  async function heldBy(accountId: number, destinationId: string): Promise<number> {
    const [{ held }] = await dataSource.query<{ held: number }[]>(
      `SELECT count(*)::int AS held FROM open_deliveries WHERE account_id = $1 AND destination_id = $2 AND held = 'paused'`,
      [accountId, destinationId],
    );
    return held;
  }

  async function settled(eventIds: string[], destinationId: string, statuses = ['delivered', 'failed']): Promise<DeliveryRow[]> {
    return waitFor(`deliveries to ${destinationId} to end`, async () => {
      const rows = await deliveriesTo(eventIds, destinationId);
      return rows.length === eventIds.length && rows.every((row) => statuses.includes(row.status)) ? rows : undefined;
    });
  }

  async function primaryDelivered(eventIds: string[]): Promise<void> {
    await waitFor('the primary deliveries', async () => {
      const rows = await eventRows(worker.app, eventIds);
      return rows.length === eventIds.length && rows.every((row) => row.status === 'delivered') ? rows : undefined;
    });
  }

  beforeAll(() => {
    dataSource = worker.app.get(DataSource);
  });

  afterAll(async () => {
    await Promise.all(receivers.map((started) => started.stop()));
  });

  it('delivers each event to the primary and to every destination that takes it, each signed with its own secret', async () => {
    const { account, primary } = await accountWithPrimary();
    const every = await addDestination(account.id);
    const picky = await addDestination(account.id, { actions: ['Customer_create'], filter: { id: { $gt: 5 } } });

    const big = await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 10 });
    const small = await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 });
    const update = await post(account.id, 'Customer_update', { ...SAMPLE_MESSAGES.Customer_update, id: 10 });
    const all = [big, small, update];

    // Decided at ingest: no delivery row for a destination that does not take the event; the primary takes every one.
    expect((await deliveries(all)).map((row) => `${row.event_id}:${row.destination_id}`).sort()).toEqual(
      [`${big}:${every.id}`, `${big}:${picky.id}`, `${small}:${every.id}`, `${update}:${every.id}`, ...all.map((id) => `${id}:primary`)].sort(),
    );
    await primaryDelivered(all);
    await settled(all, every.id, ['delivered']);
    await settled([big], picky.id, ['delivered']);

    // The primary's secret is the account's signing secret, kept on its primary destination row.
    const accountSecret = (
      await dataSource.query<{ signing_secret: string }[]>(`SELECT signing_secret FROM destinations WHERE account_id = $1 AND id = 'primary'`, [account.id])
    )[0];
    const targets: [TestReceiver, string, string[]][] = [
      [primary, secrets.open(accountSecret.signing_secret), all],
      [every.receiver, every.secret, all],
      [picky.receiver, picky.secret, [big]],
    ];
    for (const [target, secret, expected] of targets) {
      expect(target.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([...expected].sort());
      for (const request of target.requests) {
        expect(() => verified(request, secret)).not.toThrow();
        for (const other of targets.filter(([, candidate]) => candidate !== secret)) expect(() => verified(request, other[1])).toThrow();
      }
    }
    const [attempt] = await dataSource.query<{ destination_id: string | null; url: string }[]>(
      `SELECT a.destination_id, a.url FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq WHERE e.event_id = $1 AND a.destination_id = $2`,
      [big, picky.id],
    );
    expect(attempt).toEqual({ destination_id: picky.id, url: picky.receiver.url });
  });

  it('keeps delivering to the others while one destination answers 500 and another hangs', async () => {
    const { account } = await accountWithPrimary();
    const failing = await addDestination(account.id, {}, (await receiver()).respondStatus(500));
    const hanging = await addDestination(account.id, {}, (await receiver()).respondWith(() => undefined));
    const healthy = await addDestination(account.id);

    const events = [
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 2 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 3 }),
    ];
    await primaryDelivered(events);
    await settled(events, healthy.id, ['delivered']);
    // While the healthy ones are done, the failing ones are still being retried (six retries a second apart).
    const rows = await deliveries(events);
    for (const broken of [failing, hanging]) {
      const statuses = rows.filter((row) => row.destination_id === broken.id).map((row) => row.status);
      expect(statuses).toHaveLength(events.length);
      for (const status of statuses) expect(['queued', 'retrying']).toContain(status);
    }
    expect(failing.receiver.requests.length).toBeGreaterThan(0);
    // Each destination keeps its own failure clock (ENDPOINT_DISABLE_AFTER) on its row, as the primary does on its own.
    const clocks = await dataSource.query<{ id: string; failing_since: Date | null }[]>(`SELECT id, failing_since FROM destinations WHERE id = ANY($1::varchar[])`, [
      [failing.id, healthy.id],
    ]);
    expect(clocks.find((clock) => clock.id === failing.id)?.failing_since).not.toBeNull();
    expect(clocks.find((clock) => clock.id === healthy.id)?.failing_since).toBeNull();
  });

  it('disables a destination that has failed for longer than ENDPOINT_DISABLE_AFTER: its deliveries fail without a call', async () => {
    const { account } = await accountWithPrimary();
    const dead = await addDestination(account.id, { failing_since: new Date(Date.now() - 400 * 86_400_000) });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    const [row] = await settled(events, dead.id, ['failed']);
    expect(row.attempts).toBe(0);
    expect(row.last_error).toMatch(new RegExp(`^destination ${dead.id} disabled since .+; no call made`));
    expect(dead.receiver.requests).toHaveLength(0);
    const [state] = await dataSource.query<{ disabled_at: Date | null }[]>(`SELECT disabled_at FROM destinations WHERE id = $1`, [dead.id]);
    expect(state.disabled_at).not.toBeNull();
  });

  it('holds a paused destination without attempts, then resume sends its deliveries in accepted order', async () => {
    const { account } = await accountWithPrimary();
    // Ordering "subject" and one customer: the resumed deliveries must arrive one by one, in accepted order.
    const paused = await addDestination(account.id, { paused: true, ordering: 'subject' });
    const running = await addDestination(account.id);

    const events: string[] = [];
    for (let index = 1; index <= 4; index += 1) events.push(await post(account.id, 'Customer_update', { ...SAMPLE_MESSAGES.Customer_update, id: 7, name: `v${index}` }));
    await primaryDelivered(events);
    await settled(events, running.id, ['delivered']);
    const waiting = await parked(events, paused.id);
    expect(waiting.map((row) => [row.status, row.attempts])).toEqual(events.map(() => ['queued', 0]));
    expect(paused.receiver.requests).toHaveLength(0);

    // Resumed through the API: the workers' feeder finds the destination no longer paused and sends every held delivery back.
    await destinationAction(account.id, paused.id, 'resume');
    await waitFor('the feeder to send the held deliveries back', async () => (await heldBy(account.id, paused.id)) === 0);
    await settled(events, paused.id, ['delivered']);
    expect(paused.receiver.requests.map((request) => header(request, 'webhook-id'))).toEqual(events);
  });

  it("ends a deleted destination's pending deliveries failed, 'destination deleted', without a call", async () => {
    const { account } = await accountWithPrimary();
    const doomed = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await primaryDelivered(events);
    await parked(events, doomed.id);

    // Deleted behind config-api's back (no statement ended its deliveries): the worker ends the held one itself once it hears of it.
    await dataSource.query(`UPDATE destinations SET deleted_at = now(), version = version + 1 WHERE account_id = $1 AND id = $2`, [account.id, doomed.id]);
    await announceSettingsChange(worker.app, account.id);
    const [row] = await settled(events, doomed.id, ['failed']);
    expect(row).toMatchObject({ status: 'failed', attempts: 0, last_error: 'destination deleted' });
    expect(doomed.receiver.requests).toHaveLength(0);
  });

  it('delivers once, through the reconciler, deliveries stored without their jobs (ingest died between commit and enqueue)', async () => {
    const { account } = await accountWithPrimary();
    const target = await addDestination(account.id);
    // Stored by ingest's statement, the destination taking them, and no job added.
    const stored = await storeEventsFor(worker.app, account.id, [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id } })), [target.id]);
    for (const event of stored) expect(event.queued.sort()).toEqual([target.id, 'primary'].sort());
    const ids = stored.map((event) => event.eventId);
    const rows = await settled(ids, target.id, ['delivered']);
    await primaryDelivered(ids);
    expect(rows.map((row) => row.attempts)).toEqual([1, 1, 1]);
    expect(target.receiver.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([...ids].sort());
  });

  it("pauses the primary too: its events wait without attempts, resume sends them in order", async () => {
    const { account, primary } = await accountWithPrimary();
    const other = await addDestination(account.id);
    await destinationAction(account.id, 'primary', 'pause');
    const events = [
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 2 }),
    ];
    await settled(events, other.id, ['delivered']);
    const held = await parked(events, 'primary');
    expect(held.map((row) => [row.status, row.attempts])).toEqual([
      ['queued', 0],
      ['queued', 0],
    ]);
    // The event's own status is its primary delivery's: still queued.
    expect((await eventRows(worker.app, events)).map((row) => [row.status, row.attempts])).toEqual([
      ['queued', 0],
      ['queued', 0],
    ]);
    expect(primary.requests).toHaveLength(0);

    await destinationAction(account.id, 'primary', 'resume');
    await waitFor('the feeder to send the held deliveries back', async () => (await heldBy(account.id, 'primary')) === 0);
    await primaryDelivered(events);
    expect(primary.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([...events].sort());
  });

  it('never sends a pending destination delivery of an event erased meanwhile', async () => {
    const { account } = await accountWithPrimary();
    const held = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await primaryDelivered(events);
    await parked(events, held.id);

    await dataSource.query(`UPDATE events SET erased = true, message = 'null' WHERE event_id = $1`, [events[0]]);
    await destinationAction(account.id, held.id, 'resume');
    const [row] = await settled(events, held.id, ['failed']);
    expect(row).toMatchObject({ attempts: 0, last_error: 'erased' });
    expect(held.receiver.requests).toHaveLength(0);
  });

  it('stops the destinations of an offboarded account at once', async () => {
    const { account } = await accountWithPrimary();
    const held = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await parked(events, held.id);
    const seqs = (await eventRows(worker.app, events)).map((row) => row.seq);

    const response = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}`, { method: 'DELETE', headers: ADMIN_HEADERS });
    expect(response.status).toBeLessThan(300);
    // Marked deleted, its credentials gone, in the deletion's own transaction (the rows then go with the account).
    const rows = await dataSource.query<{ deleted_at: Date | null; credentials: unknown[] }[]>(
      `SELECT deleted_at, ARRAY[target, target_shown, auth, signing_secret, previous_signing_secret] AS credentials FROM destinations WHERE account_id = $1`,
      [account.id],
    );
    expect(rows.every((row) => row.deleted_at !== null && row.credentials.every((value) => value === null))).toBe(true);
    await waitFor('the account to be gone', async () =>
      (await dataSource.query<unknown[]>(`SELECT 1 FROM accounts WHERE id = $1`, [account.id])).length === 0 ? true : undefined,
    );
    expect(await deliveries(events)).toEqual([]);
    // Nothing of it is left for the reconciler or the feeder to find either.
    expect(await dataSource.query<unknown[]>(`SELECT 1 FROM open_deliveries WHERE event_seq = ANY($1::bigint[])`, [seqs])).toEqual([]);
    expect(await dataSource.query<unknown[]>(`SELECT 1 FROM destinations WHERE id = $1`, [held.id])).toEqual([]);
    expect(held.receiver.requests).toHaveLength(0);
  });

  it('fails every waiting delivery of a deleted destination at once (config-api delete), and the rest when their job runs', async () => {
    const { account } = await accountWithPrimary();
    const doomed = await addDestination(account.id, { paused: true });
    const events = [
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 2 }),
    ];
    await parked(events, doomed.id);
    // One more, stored by ingest's statement whose job is not in the queue yet (ingest between its commit and its enqueue).
    const [late] = await storeEventsFor(worker.app, account.id, [{ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id: 3 } }], [doomed.id]);

    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${account.id}/destinations/${doomed.id}`)).status).toBe(204);
    // No waiting: the deletion's own statement ended the held ones.
    expect((await deliveriesTo(events, doomed.id)).map((row) => [row.status, row.attempts, row.last_error])).toEqual([
      ['failed', 0, 'destination deleted'],
      ['failed', 0, 'destination deleted'],
    ]);
    expect(await heldBy(account.id, doomed.id)).toBe(0);

    // The late one ends the same way when its job runs, without a call.
    await deliveryQueueOf(worker.app).addBulk([firstDeliveryStep(late.seq, account.id, doomed.id)]);
    const [row] = await settled([late.eventId], doomed.id, ['failed']);
    expect(row).toMatchObject({ status: 'failed', attempts: 0, last_error: 'destination deleted' });
    expect(doomed.receiver.requests).toHaveLength(0);
  });

  it('publishes to a RabbitMQ destination as a CloudEvent, signed with its secret, and records the attempt without the password', async () => {
    const { account } = await accountWithPrimary();
    const exchange = `dest-core-${process.pid}-${Date.now().toString(36)}`;
    const broker = await connect('amqp://guest:guest@127.0.0.1:5672');
    try {
      const channel = await broker.createChannel();
      await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: true });
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, 'events');
      const secret = generateSigningSecret();
      const shown = `amqp://guest:***@127.0.0.1:5672/?exchange=${exchange}&routing_key=events`;
      const id = await insertDestination(account.id, `amqp://guest:guest@127.0.0.1:5672/?exchange=${exchange}&routing_key=events`, shown, secret, {
        type: 'rabbitmq',
        format: 'cloudevents',
      });

      const eventId = await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 3 });
      const message = await waitFor('the CloudEvent in the queue', async () => (await channel.get(queue, { noAck: true })) || undefined);
      const body = message.content.toString('utf8');
      expect(JSON.parse(body)).toMatchObject({ specversion: '1.0', id: eventId, type: 'Customer_create', data: { id: 3 } });
      const headers = message.properties.headers as Record<string, string>;
      expect(() => new Webhook(secret).verify(body, { 'webhook-id': headers['webhook-id'], 'webhook-timestamp': String(headers['webhook-timestamp']), 'webhook-signature': headers['webhook-signature'] })).not.toThrow();
      await settled([eventId], id, ['delivered']);
      const attempts = await dataSource.query<{ url: string; request_headers: Record<string, string> }[]>(
        `SELECT url, request_headers FROM delivery_attempts WHERE destination_id = $1`,
        [id],
      );
      expect(attempts.map((attempt) => attempt.url)).toEqual([shown]);
      expect(JSON.stringify(attempts)).not.toContain('guest:guest');
    } finally {
      await broker.close();
    }
  });

  it('fans out the events of a batch too, a duplicate adding no delivery', async () => {
    const { account } = await accountWithPrimary();
    const picky = await addDestination(account.id, { filter: { id: { $in: [1, 3] } } });
    const ids = [1, 2, 3].map((id) => `dest-batch-${process.pid}-${Date.now().toString(36)}-${id}`);
    const batch = (items: { event_id: string; id: number }[]) =>
      fetch(`${ingest.url}/v1/events/batch`, {
        method: 'POST',
        headers: INGEST_HEADERS,
        body: JSON.stringify({
          events: items.map((item) => ({ event_id: item.event_id, account_id: account.id, action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id: item.id } })),
        }),
      });
    expect((await batch(ids.map((event_id, index) => ({ event_id, id: index + 1 })))).status).toBe(202);
    expect((await batch([{ event_id: ids[0], id: 1 }])).status).toBe(202);
    const rows = await settled([ids[0], ids[2]], picky.id, ['delivered']);
    expect(rows.map((row) => row.event_id)).toEqual([ids[0], ids[2]]);
    expect((await deliveriesTo(ids, picky.id)).map((row) => row.event_id)).toEqual([ids[0], ids[2]]);
    // The primary took each event once, the duplicate adding none.
    expect((await deliveriesTo(ids, 'primary')).map((row) => row.event_id)).toEqual(ids);
    expect(picky.receiver.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([ids[0], ids[2]].sort());
  });
});
