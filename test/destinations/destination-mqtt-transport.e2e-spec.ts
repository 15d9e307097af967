import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import type Redis from 'ioredis';
import type { DestinationTransports } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import type { MqttTransport } from '../../apps/delivery-worker/src/delivery/destinations/mqtt-transport';
import { freePort } from '@app/testing';
import { HangingPort, ResettableRelay } from '../support/hanging-port';
import { expectNoCredential, testDelivery, testTransports, useBrokerTransports } from '../support/transport-fixtures';
import { waitFor } from '@app/testing';

const PREFIX = `${process.env.REDIS_PREFIX ?? 'cbtest'}:mqtt-transport-spec`;
const TOPIC = `cbtest/destinations/${process.pid}-${Date.now()}`;
const PASSWORD = 'mqtt-secret-pass';
const suite = useBrokerTransports('mqtt', PREFIX);
const { log, reasons, send } = suite;
const received: IPublishPacket[] = [];
let redis: Redis;
let transports: DestinationTransports;
let subscriber: MqttClient;

beforeAll(async () => {
  ({ redis, transports } = suite);
  subscriber = await connectAsync({ host: '127.0.0.1', port: 1883, protocolVersion: 5, reconnectPeriod: 0 });
  subscriber.on('message', (_topic, _payload, packet) => received.push(packet));
  await subscriber.subscribeAsync(TOPIC, { qos: 1 });
});

afterAll(async () => {
  await subscriber.endAsync();
});

it('publishes MQTT 5 at QoS 1: exact payload, content type and webhook-* user properties', async () => {
  const delivery = testDelivery('{"action":"Customer_create","message":{"id":3,"n":1.50}}');
  expect(await send(`mqtt://127.0.0.1:1883/${TOPIC}`, delivery)).toMatchObject({ ok: true });
  const packet = await waitFor('the message at the subscriber', () => received.find((candidate) => candidate.properties?.userProperties?.['webhook-id'] === delivery.eventId));
  expect(packet.payload.toString()).toBe(delivery.body);
  expect(packet.qos).toBe(1);
  expect(packet.properties).toMatchObject({ contentType: 'application/json', userProperties: delivery.signatureHeaders });
});

it('refuses a topic with a wildcard', async () => {
  for (const topic of ['events/#', 'events/+/created', 'events/%23']) {
    expect(await send(`mqtt://127.0.0.1:1883/${topic}`)).toMatchObject({ ok: false, reason: expect.stringContaining('one topic') });
  }
});

it('fails when nothing listens, and when the broker hangs, within the time-out', async () => {
  expect(await send(`mqtt://user:${PASSWORD}@127.0.0.1:${await freePort()}/${TOPIC}`)).toMatchObject({ ok: false, reason: expect.stringContaining('ECONNREFUSED') });
  const hanging = await new HangingPort().start();
  try {
    expect(await send(`mqtt://user:${PASSWORD}@127.0.0.1:${hanging.port}/${TOPIC}`, testDelivery(), 800)).toMatchObject({ ok: false, reason: expect.stringMatching(/^time-out/) });
  } finally {
    await hanging.stop();
  }
});

it('reconnects on the next send after the connection dropped', async () => {
  const relay = await new ResettableRelay(1883).start();
  const url = `mqtt://127.0.0.1:${relay.port}/${TOPIC}`;
  try {
    expect(await send(url)).toMatchObject({ ok: true });
    relay.resetConnections();
    await waitFor('the drop to be logged', () => log.lines.some((line) => line.includes(`127.0.0.1:${relay.port} closed`)));
    const delivery = testDelivery();
    expect(await send(url, delivery)).toMatchObject({ ok: true });
    expect(relay.accepted).toBe(2);
    await waitFor('the message after the reconnect', () => received.some((packet) => packet.properties?.userProperties?.['webhook-id'] === delivery.eventId));
  } finally {
    await relay.stop();
  }
  await waitFor('the dropped connection to leave the pool', () => (transports.byType.mqtt as MqttTransport).openConnections === 1);
});

it('destroys a connection whose broker never sends PUBACK, and bounds the publishes waiting on it', async () => {
  const relay = await new ResettableRelay(1883).start();
  const bounded = testTransports(redis, PREFIX, log, { maxPendingPublishesPerConnection: 3 });
  const mqtt = bounded.byType.mqtt as MqttTransport;
  const url = `mqtt://127.0.0.1:${relay.port}/${TOPIC}-unheard`;
  try {
    expect(await send(url, testDelivery(), 5000, bounded)).toMatchObject({ ok: true });
    expect(relay.openClients).toBe(1);
    relay.silence();
    // Five at once on the silent connection: three wait for a PUBACK, two fail at once with no body queued.
    const sends = Array.from({ length: 5 }, () => send(url, testDelivery(), 1500, bounded));
    await waitFor('three publishes waiting', () => mqtt.pendingPublishes === 3);
    const outcomes = await Promise.all(sends);
    const why = outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.reason));
    expect(why.filter((reason) => /^time-out: 3 publishes already wait for the broker's PUBACK on this connection$/.test(reason))).toHaveLength(2);
    // One waited out its time-out and destroyed the connection; the two others failed with it at once.
    expect(why.filter((reason) => reason === 'time-out: no PUBACK from the broker within 1500 ms')).toHaveLength(1);
    expect(why.filter((reason) => reason === 'time-out: no PUBACK from the broker (the connection was destroyed: the broker stopped acknowledging)')).toHaveLength(2);
    // The silent connection is destroyed, not kept with its pending bodies: its socket closes, nothing waits.
    await waitFor('the silent connection to close', () => relay.openClients === 0, { timeoutMs: 3000 });
    expect(mqtt.pendingPublishes).toBe(0);
    expect(mqtt.openConnections).toBe(0);
    expect(await send(url, testDelivery(), 5000, bounded)).toMatchObject({ ok: true });
    expect(relay.accepted).toBe(2);
  } finally {
    await bounded.close();
    await relay.stop();
  }
});

it('refuses a private broker unless private targets are allowed', async () => {
  const strict = testTransports(redis, PREFIX, log, { allowPrivateTargets: false });
  try {
    expect(await send(`mqtt://127.0.0.1:1883/${TOPIC}`, testDelivery(), 5000, strict)).toMatchObject({
      ok: false,
      reason: 'refused: broker host 127.0.0.1 points to a non-public address or does not resolve',
    });
  } finally {
    await strict.close();
  }
});

it('writes no credential to a log line or a reason', () => {
  expect(reasons.length).toBeGreaterThanOrEqual(4);
  expectNoCredential([...log.lines, ...reasons], [PASSWORD]);
});
