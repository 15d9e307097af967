import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type Redis from 'ioredis';
import type { DestinationTransports } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import type { NatsTransport } from '../../apps/delivery-worker/src/delivery/destinations/nats-transport';
import { freePort } from '@app/testing';
import { HangingPort, ResettableRelay } from '../support/hanging-port';
import { expectNoCredential, testDelivery, testTransports, useBrokerTransports } from '../support/transport-fixtures';
import { waitFor } from '@app/testing';

const PREFIX = `${process.env.REDIS_PREFIX ?? 'cbtest'}:nats-transport-spec`;
const STREAM = `cbtest_destinations_${process.pid}_${Date.now()}`;
const SUBJECT = `${STREAM}.events`;
const suite = useBrokerTransports('nats', PREFIX);
const { log, reasons, send } = suite;
let redis: Redis;
let transports: DestinationTransports;
let nats: NatsConnection;
let manager: JetStreamManager;

beforeAll(async () => {
  ({ redis, transports } = suite);
  nats = await connect({ servers: '127.0.0.1:4222' });
  manager = await jetstreamManager(nats);
  // The user's stream, made by the test: the transport only publishes.
  await manager.streams.add({ name: STREAM, subjects: [`${STREAM}.>`] });
});

afterAll(async () => {
  await manager.streams.delete(STREAM).catch(() => undefined);
  await nats.close();
});

it('publishes with JetStream: acked, Nats-Msg-Id the event id, webhook-* headers, exact body', async () => {
  const delivery = testDelivery('{"action":"Customer_create","message":{"id":9,"n":1.50}}');
  expect(await send(`nats://127.0.0.1:4222/${SUBJECT}`, delivery)).toMatchObject({ ok: true });
  const stored = await manager.streams.getMessage(STREAM, { seq: 1 });
  expect(stored?.subject).toBe(SUBJECT);
  expect(stored?.string()).toBe(delivery.body);
  expect(stored?.header.get('Nats-Msg-Id')).toBe(delivery.eventId);
  for (const [name, value] of Object.entries(delivery.signatureHeaders)) expect(stored?.header.get(name)).toBe(value);
});

it('lets the stream drop a repeat of the same event (Nats-Msg-Id)', async () => {
  const before = (await manager.streams.info(STREAM)).state.messages;
  const delivery = testDelivery();
  expect(await send(`nats://127.0.0.1:4222/${SUBJECT}`, delivery)).toMatchObject({ ok: true });
  expect(await send(`nats://127.0.0.1:4222/${SUBJECT}`, { ...delivery, signatureHeaders: { ...delivery.signatureHeaders, 'webhook-timestamp': '1' } })).toMatchObject({ ok: true });
  expect((await manager.streams.info(STREAM)).state.messages).toBe(before + 1);
});

it('fails when no stream takes the subject', async () => {
  const subject = `cbtest_nostream_${process.pid}.events`;
  expect(await send(`nats://127.0.0.1:4222/${subject}`)).toMatchObject({ ok: false, reason: `no stream for subject ${subject}` });
});

it('refuses a target without a single subject', async () => {
  expect(await send('nats://127.0.0.1:4222/orders.*')).toMatchObject({ ok: false, reason: expect.stringContaining('one subject') });
});

it('fails when nothing listens, and when the server hangs, within the time-out', async () => {
  expect(await send(`nats://user:nats-secret-pass@127.0.0.1:${await freePort()}/${SUBJECT}`)).toMatchObject({ ok: false });
  const hanging = await new HangingPort().start();
  try {
    expect(await send(`nats://127.0.0.1:${hanging.port}/${SUBJECT}`, testDelivery(), 800)).toMatchObject({ ok: false, reason: expect.stringMatching(/^time-out/) });
  } finally {
    await hanging.stop();
  }
});

it('reconnects on the next send after the connection dropped', async () => {
  const relay = await new ResettableRelay(4222).start();
  const url = `nats://127.0.0.1:${relay.port}/${SUBJECT}`;
  try {
    expect(await send(url)).toMatchObject({ ok: true });
    relay.resetConnections();
    await waitFor('the drop to be logged', () => log.lines.some((line) => line.includes(`127.0.0.1:${relay.port} closed`)));
    expect(await send(url)).toMatchObject({ ok: true });
    expect(relay.accepted).toBe(2);
  } finally {
    await relay.stop();
  }
});

it('refuses a private server unless private targets are allowed', async () => {
  const strict = testTransports(redis, PREFIX, log, { allowPrivateTargets: false });
  try {
    expect(await send(`nats://127.0.0.1:4222/${SUBJECT}`, testDelivery(), 5000, strict)).toMatchObject({
      ok: false,
      reason: 'refused: broker host 127.0.0.1 points to a non-public address or does not resolve',
    });
  } finally {
    await strict.close();
  }
});

it('keeps one pooled connection per server, dropping a dropped one at once', async () => {
  await waitFor('the dropped connection to leave the pool', () => (transports.byType.nats as NatsTransport).openConnections === 1);
});

it('writes no credential to a log line or a reason', () => {
  expect(reasons.length).toBeGreaterThanOrEqual(4);
  expectNoCredential([...log.lines, ...reasons], ['nats-secret-pass']);
});
