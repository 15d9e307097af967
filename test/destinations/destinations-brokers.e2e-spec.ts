import { jetstreamManager, type JetStreamManager, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect as connectNats } from '@nats-io/transport-node';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall } from '../support/admin-client';
import { useApps } from '../support/apps';
import { createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { useOwnRedisPrefix } from '../support/worker-process';

/**
 * NATS JetStream and MQTT destinations through the whole service: created with the admin API, events
 * posted to ingest, fanned out there, published by the worker, read back with each broker's own client
 * (the transports alone: destination-nats-transport / destination-mqtt-transport e2e specs).
 */
useOwnRedisPrefix('destinations-brokers');
jest.setTimeout(60_000);

const RUN = `${process.pid}_${Date.now().toString(36)}`;
const STREAM = `cbtest_pipeline_${RUN}`;
const TOPIC = `cbtest/pipeline/${RUN}`;

const { configApi, ingest, worker } = useApps({
  configApi: ConfigApiModule,
  ingest: IngestModule,
  worker: [DeliveryWorkerModule, { RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s', DELIVERY_TIMEOUT_MS: '2000' }],
});
let dataSource: DataSource;
let nats: NatsConnection;
let streams: JetStreamManager;
let subscriber: MqttClient;
const packets: IPublishPacket[] = [];
let counter = 0;

beforeAll(async () => {
  dataSource = worker.app.get(DataSource);
  nats = await (connectNats as unknown as (options: { servers: string }) => Promise<NatsConnection>)({ servers: '127.0.0.1:4222' });
  streams = await jetstreamManager(nats);
  await streams.streams.add({ name: STREAM, subjects: [`${STREAM}.>`], storage: StorageType.Memory });
  subscriber = await connectAsync({ host: '127.0.0.1', port: 1883, protocolVersion: 5, reconnectPeriod: 0 });
  subscriber.on('message', (_topic, _payload, packet) => packets.push(packet));
  await subscriber.subscribeAsync(TOPIC, { qos: 1 });
});

afterAll(async () => {
  await subscriber?.endAsync();
  await streams?.streams.delete(STREAM).catch(() => undefined);
  await nats?.close();
});

/** 202 for a new event, 200 for a repeat of one already accepted. */
async function post(accountId: number, eventId: string, id: number, expected = 202): Promise<void> {
  const response = await fetch(`${ingest.url}/v1/events`, {
    method: 'POST',
    headers: INGEST_HEADERS,
    body: JSON.stringify({ event_id: eventId, account_id: accountId, action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id } }),
  });
  expect(response.status).toBe(expected);
}

const newEventId = (): string => `pipe-${RUN}-${++counter}`;

/** An account without a push URL and one destination, created through the admin API; waits until ingest fans out to it. */
async function accountWith(destination: Record<string, unknown>): Promise<{ accountId: number; id: string; secret: string }> {
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: null, contentType: 'JSON', permissions: 'all' });
  const created = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/destinations`, destination);
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  // config-api announces the change; ingest's directory learns it from that notice, a moment later.
  await waitFor('ingest to fan out to the new destination', async () => {
    const probe = newEventId();
    await post(account.id, probe, 0);
    const rows = await dataSource.query(`SELECT 1 FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.event_id = $1 AND d.destination_id = $2`, [probe, id]);
    return rows.length === 1;
  }, { timeoutMs: 20_000, intervalMs: 200 });
  return { accountId: account.id, id, secret: created.body.signing_secret as string };
}

async function settled(eventIds: string[], destinationId: string, status: string): Promise<Array<{ status: string; attempts: number; last_error: string | null }>> {
  return waitFor(`deliveries to ${destinationId} to be ${status}`, async () => {
    const rows = await dataSource.query<Array<{ status: string; attempts: number; last_error: string | null }>>(
      `SELECT d.status, d.attempts, d.last_error FROM deliveries d JOIN events e ON e.seq = d.event_seq
        WHERE e.event_id = ANY($1::varchar[]) AND d.destination_id = $2`,
      [eventIds, destinationId],
    );
    return rows.length === eventIds.length && rows.every((row) => row.status === status) ? rows : undefined;
  });
}

it('publishes events to a NATS JetStream destination: the udesk body, Nats-Msg-Id the event id, signed with its secret, once per event', async () => {
  const { accountId, id, secret } = await accountWith({ type: 'nats', target: `nats://127.0.0.1:4222/${STREAM}.events` });
  const eventIds = [newEventId(), newEventId()];
  await post(accountId, eventIds[0], 1);
  await post(accountId, eventIds[1], 2);
  // A repeat of an accepted event adds no delivery.
  await post(accountId, eventIds[0], 1, 200);
  expect(await settled(eventIds, id, 'delivered')).toEqual([
    { status: 'delivered', attempts: 1, last_error: null },
    { status: 'delivered', attempts: 1, last_error: null },
  ]);
  const { state } = await streams.streams.info(STREAM);
  const stored = await Promise.all(Array.from({ length: state.messages }, (_, index) => streams.streams.getMessage(STREAM, { seq: state.first_seq + index })));
  const ours = stored.filter((message) => message !== null && eventIds.includes(message.header.get('Nats-Msg-Id')));
  // Once per event; in no promised order (the destination does not order by subject, so two jobs may publish at once).
  expect(ours.map((message) => message?.header.get('Nats-Msg-Id')).sort()).toEqual([...eventIds].sort());
  ours.forEach((message) => {
    const index = eventIds.indexOf(message?.header.get('Nats-Msg-Id') ?? '');
    const body = message?.string() ?? '';
    expect(JSON.parse(body)).toEqual({ action: 'Customer_create', message: { ...SAMPLE_MESSAGES.Customer_create, id: index + 1 } });
    const signature = { 'webhook-id': message?.header.get('webhook-id') ?? '', 'webhook-timestamp': message?.header.get('webhook-timestamp') ?? '', 'webhook-signature': message?.header.get('webhook-signature') ?? '' };
    expect(signature['webhook-id']).toBe(eventIds[index]);
    expect(() => new Webhook(secret).verify(body, signature)).not.toThrow();
  });
});

it('retries a NATS destination whose subject no stream takes, saying so in the delivery', async () => {
  const subject = `cbtest_nostream_${RUN}.events`;
  const { accountId, id } = await accountWith({ type: 'nats', target: `nats://127.0.0.1:4222/${subject}` });
  const eventId = newEventId();
  await post(accountId, eventId, 1);
  const [row] = await waitFor('a failed attempt at the NATS destination', async () => {
    const rows = await dataSource.query<Array<{ status: string; attempts: number; last_error: string | null }>>(
      `SELECT d.status, d.attempts, d.last_error FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.event_id = $1 AND d.destination_id = $2`,
      [eventId, id],
    );
    return rows[0]?.attempts ? rows : undefined;
  });
  expect(row.status).toBe('retrying');
  expect(row.last_error).toMatch(new RegExp(`^no stream for subject ${subject.replace(/\./g, '\\.')} `));
});

it('publishes events to an MQTT destination as CloudEvents at QoS 1, signed in user properties', async () => {
  const { accountId, id, secret } = await accountWith({ type: 'mqtt', target: `mqtt://127.0.0.1:1883/${TOPIC}`, format: 'cloudevents' });
  const eventIds = [newEventId(), newEventId()];
  await post(accountId, eventIds[0], 1);
  await post(accountId, eventIds[1], 2);
  await settled(eventIds, id, 'delivered');
  for (const [index, eventId] of eventIds.entries()) {
    const packet = await waitFor(`${eventId} at the subscriber`, () => packets.find((candidate) => candidate.properties?.userProperties?.['webhook-id'] === eventId));
    expect(packet.qos).toBe(1);
    const body = packet.payload.toString();
    expect(JSON.parse(body)).toMatchObject({ specversion: '1.0', id: eventId, type: 'Customer_create', data: { id: index + 1 } });
    const properties = packet.properties?.userProperties as Record<string, string>;
    expect(() => new Webhook(secret).verify(body, { 'webhook-id': properties['webhook-id'], 'webhook-timestamp': properties['webhook-timestamp'], 'webhook-signature': properties['webhook-signature'] })).not.toThrow();
  }
});
