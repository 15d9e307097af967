import { randomBytes } from 'node:crypto';
import { connect } from 'amqplib';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { Destination, failDeletedDestinationDeliveries, resumeDestination } from '@app/persistence';
import { readSecretsKeys, SecretBox } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings, type TestAccount } from './support/fixtures';
import { type ReceivedRequest, TestReceiver } from './support/receiver';
import { waitFor } from './support/wait-for';
import { announceSettingsChange, deliveryQueueOf, eventRows, insertEvents, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('destinations-delivery');
jest.setTimeout(60_000);

const secrets = new SecretBox(readSecretsKeys({ SECRETS_KEY: process.env.SECRETS_KEY }, false, []));

interface TestDestination {
  id: string;
  secret: string;
  receiver: TestReceiver;
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
  let configApi: RunningApp;
  let ingest: RunningApp;
  let worker: RunningApp;
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

  /** A webhook destination written through the entity, its credentials sealed, then announced (ingest's cache). */
  async function addDestination(accountId: number, fields: Partial<Destination> = {}, target?: TestReceiver): Promise<TestDestination> {
    const hook = target ?? (await receiver());
    const secret = generateSigningSecret();
    const id = `dst_${randomBytes(12).toString('hex')}`;
    const row: Partial<Destination> = {
      id,
      accountId,
      type: 'webhook',
      target: secrets.seal(hook.url),
      targetShown: hook.url,
      signingSecret: secrets.seal(secret),
      actions: null,
      filter: null,
      ...fields,
    };
    await dataSource.getRepository(Destination).insert(row as never);
    await announceSettingsChange(worker.app, accountId);
    return { id, secret, receiver: hook };
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

  async function deliveries(eventIds: string[]): Promise<DeliveryRow[]> {
    return dataSource.query<DeliveryRow[]>(
      `SELECT e.event_id, d.destination_id, d.status, d.attempts, d.next_attempt_at, d.last_error
         FROM destination_deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE e.event_id = ANY($1::varchar[]) ORDER BY d.event_seq, d.destination_id`,
      [eventIds],
    );
  }

  async function settled(eventIds: string[], destinationId: string, statuses = ['delivered', 'failed']): Promise<DeliveryRow[]> {
    return waitFor(`deliveries to ${destinationId} to end`, async () => {
      const rows = (await deliveries(eventIds)).filter((row) => row.destination_id === destinationId);
      return rows.length === eventIds.length && rows.every((row) => statuses.includes(row.status)) ? rows : undefined;
    });
  }

  async function primaryDelivered(eventIds: string[]): Promise<void> {
    await waitFor('the primary deliveries', async () => {
      const rows = await eventRows(worker.app, eventIds);
      return rows.length === eventIds.length && rows.every((row) => row.status === 'delivered') ? rows : undefined;
    });
  }

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    ingest = await startApp(IngestModule);
    worker = await startApp(DeliveryWorkerModule, {
      RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
      DELIVERY_TIMEOUT_MS: '1000',
      RECONCILE_INTERVAL: '1s',
      WORKER_CONCURRENCY: '16',
    });
    dataSource = worker.app.get(DataSource);
  });

  afterAll(async () => {
    await worker?.close();
    await ingest?.close();
    await configApi?.close();
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

    // Decided at ingest: no delivery row for a destination that does not take the event.
    expect((await deliveries(all)).map((row) => `${row.event_id}:${row.destination_id}`).sort()).toEqual(
      [`${big}:${every.id}`, `${big}:${picky.id}`, `${small}:${every.id}`, `${update}:${every.id}`].sort(),
    );
    await primaryDelivered(all);
    await settled(all, every.id, ['delivered']);
    await settled([big], picky.id, ['delivered']);

    const accountSecret = (await dataSource.query<{ signing_secret: string }[]>(`SELECT signing_secret FROM accounts WHERE id = $1`, [account.id]))[0];
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
    const waiting = await waitFor('the paused deliveries to be parked', async () => {
      const rows = (await deliveries(events)).filter((row) => row.destination_id === paused.id);
      return rows.length === events.length && rows.every((row) => row.next_attempt_at === null) ? rows : undefined;
    });
    expect(waiting.map((row) => [row.status, row.attempts])).toEqual(events.map(() => ['queued', 0]));
    expect(paused.receiver.requests).toHaveLength(0);

    expect(await resumeDestination(dataSource, deliveryQueueOf(worker.app), account.id, paused.id)).toBe(events.length);
    await settled(events, paused.id, ['delivered']);
    expect(paused.receiver.requests.map((request) => header(request, 'webhook-id'))).toEqual(events);
  });

  it("ends a deleted destination's pending deliveries failed, 'destination deleted', without a call", async () => {
    const { account } = await accountWithPrimary();
    const doomed = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await primaryDelivered(events);
    await waitFor('the delivery to be parked', async () => ((await deliveries(events))[0]?.next_attempt_at === null ? true : undefined));

    await dataSource.query(`UPDATE destinations SET deleted_at = now() WHERE id = $1`, [doomed.id]);
    const [row] = await settled(events, doomed.id, ['failed']);
    expect(row).toMatchObject({ status: 'failed', attempts: 0, last_error: 'destination deleted' });
    expect(doomed.receiver.requests).toHaveLength(0);
  });

  it('delivers once, through the reconciler, deliveries stored without their jobs (ingest died between commit and enqueue)', async () => {
    const { account } = await accountWithPrimary();
    const target = await addDestination(account.id);
    const stored = await insertEvents(worker.app, account.id, [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id } })));
    await dataSource.query(
      `INSERT INTO destination_deliveries (event_seq, destination_id, account_id, status, next_attempt_at)
       SELECT seq, $2, $3, 'queued', now() - interval '1 minute' FROM unnest($1::bigint[]) AS seq`,
      [stored.map((event) => event.seq), target.id, account.id],
    );
    const ids = stored.map((event) => event.eventId);
    const rows = await settled(ids, target.id, ['delivered']);
    expect(rows.map((row) => row.attempts)).toEqual([1, 1, 1]);
    expect(target.receiver.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([...ids].sort());
  });

  it("pauses the primary too: its events wait without attempts, resume sends them in order", async () => {
    const { account, primary } = await accountWithPrimary();
    const other = await addDestination(account.id);
    await dataSource.query(`UPDATE callback_settings SET paused = true, version = version + 1 WHERE account_id = $1`, [account.id]);
    await announceSettingsChange(worker.app, account.id);
    const events = [
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 2 }),
    ];
    await settled(events, other.id, ['delivered']);
    const parked = await waitFor('the primary events to be parked', async () => {
      const rows = await eventRows(worker.app, events);
      return rows.every((row) => row.next_attempt_at === null) ? rows : undefined;
    });
    expect(parked.map((row) => [row.status, row.attempts])).toEqual([
      ['queued', 0],
      ['queued', 0],
    ]);
    expect(primary.requests).toHaveLength(0);

    const announce = () => announceSettingsChange(worker.app, account.id);
    expect(await resumeDestination(dataSource, deliveryQueueOf(worker.app), account.id, 'primary', announce)).toBe(2);
    await primaryDelivered(events);
    expect(primary.requests.map((request) => header(request, 'webhook-id')).sort()).toEqual([...events].sort());
  });

  it('never sends a pending destination delivery of an event erased meanwhile', async () => {
    const { account } = await accountWithPrimary();
    const held = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await primaryDelivered(events);
    await waitFor('the delivery to be parked', async () => ((await deliveries(events))[0]?.next_attempt_at === null ? true : undefined));

    await dataSource.query(`UPDATE events SET erased = true, message = 'null' WHERE event_id = $1`, [events[0]]);
    await resumeDestination(dataSource, deliveryQueueOf(worker.app), account.id, held.id);
    const [row] = await settled(events, held.id, ['failed']);
    expect(row).toMatchObject({ attempts: 0, last_error: 'erased' });
    expect(held.receiver.requests).toHaveLength(0);
  });

  it('stops the destinations of an offboarded account at once', async () => {
    const { account } = await accountWithPrimary();
    const held = await addDestination(account.id, { paused: true });
    const events = [await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 })];
    await waitFor('the delivery to be parked', async () => ((await deliveries(events))[0]?.next_attempt_at === null ? true : undefined));

    const response = await fetch(`${configApi.url}/admin/v1/accounts/${account.id}`, { method: 'DELETE', headers: ADMIN_HEADERS });
    expect(response.status).toBeLessThan(300);
    // Marked deleted in the deletion's own transaction (the rows then go with the account).
    const rows = await dataSource.query<{ deleted_at: Date | null }[]>(`SELECT deleted_at FROM destinations WHERE id = $1`, [held.id]);
    expect(rows.every((row) => row.deleted_at !== null)).toBe(true);
    await waitFor('the account to be gone', async () =>
      (await dataSource.query<unknown[]>(`SELECT 1 FROM accounts WHERE id = $1`, [account.id])).length === 0 ? true : undefined,
    );
    expect(await deliveries(events)).toEqual([]);
    expect(await dataSource.query<unknown[]>(`SELECT 1 FROM destinations WHERE id = $1`, [held.id])).toEqual([]);
    expect(held.receiver.requests).toHaveLength(0);
  });

  it('fails every pending delivery of a deleted destination at once (config-api delete)', async () => {
    const { account } = await accountWithPrimary();
    const doomed = await addDestination(account.id, { paused: true });
    const events = [
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 1 }),
      await post(account.id, 'Customer_create', { ...SAMPLE_MESSAGES.Customer_create, id: 2 }),
    ];
    await dataSource.query(`UPDATE destinations SET deleted_at = now() WHERE id = $1`, [doomed.id]);
    expect(await failDeletedDestinationDeliveries(dataSource, doomed.id)).toBe(2);
    expect((await deliveries(events)).map((row) => [row.status, row.last_error])).toEqual([
      ['failed', 'destination deleted'],
      ['failed', 'destination deleted'],
    ]);
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
      const id = `dst_${randomBytes(12).toString('hex')}`;
      const shown = `amqp://guest:***@127.0.0.1:5672/?exchange=${exchange}&routing_key=events`;
      const row: Partial<Destination> = {
        id,
        accountId: account.id,
        type: 'rabbitmq',
        format: 'cloudevents',
        target: secrets.seal(`amqp://guest:guest@127.0.0.1:5672/?exchange=${exchange}&routing_key=events`),
        targetShown: shown,
        signingSecret: secrets.seal(secret),
      };
      await dataSource.getRepository(Destination).insert(row as never);
      await announceSettingsChange(worker.app, account.id);

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
});
