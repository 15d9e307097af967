import { type Channel, type ChannelModel, connect, type GetMessage } from 'amqplib';
import type Redis from 'ioredis';
import type { DestinationTransports } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import type { RabbitMqTransport } from '../../apps/delivery-worker/src/delivery/destinations/rabbitmq-transport';
import { freePort } from '@app/testing';
import { HangingPort, ResettableRelay } from '../support/hanging-port';
import { brokerTarget, expectNoCredential, testDelivery, testTransports, useBrokerTransports } from '../support/transport-fixtures';
import { waitFor } from '@app/testing';

const PREFIX = `${process.env.REDIS_PREFIX ?? 'cbtest'}:rabbitmq-transport-spec`;
const BROKER = 'amqp://guest:guest@127.0.0.1:5672';
const WRONG_PASSWORD = 'wrong-pass-8812';
const EXCHANGE = `cbtest-destinations-${process.pid}-${Date.now()}`;
const suite = useBrokerTransports('rabbitmq', PREFIX);
const { log, reasons } = suite;
let redis: Redis;
let transports: DestinationTransports;
let model: ChannelModel;
let channel: Channel;
let queue = '';

const target = (url: string) => brokerTarget('rabbitmq', url);
const send = (url: string, timeoutMs?: number, through?: DestinationTransports) => suite.send(url, testDelivery(), timeoutMs, through);

beforeAll(async () => {
  ({ redis, transports } = suite);
  model = await connect(BROKER);
  channel = await model.createChannel();
  // The test's own exchange and queue: the transport itself never declares anything.
  await channel.assertExchange(EXCHANGE, 'direct', { durable: false, autoDelete: true });
  queue = (await channel.assertQueue('', { exclusive: true })).queue;
  await channel.bindQueue(queue, EXCHANGE, 'events');
});

afterAll(async () => {
  await model.close();
});

function nextMessage(): Promise<GetMessage> {
  return waitFor('a message in the test queue', async () => (await channel.get(queue, { noAck: true })) || undefined);
}

it('publishes persistent, confirmed, with message_id, content type and webhook-* headers', async () => {
  const delivery = testDelivery('{"action":"Customer_create","message":{"id":5,"n":1.50}}');
  const outcome = await transports.send(target(`${BROKER}/?exchange=${EXCHANGE}&routing_key=events`), delivery, 5000);
  expect(outcome).toMatchObject({ ok: true });
  const message = await nextMessage();
  expect(message.content.toString('utf8')).toBe(delivery.body);
  expect(message.properties).toMatchObject({ messageId: delivery.eventId, contentType: 'application/json', deliveryMode: 2, headers: delivery.signatureHeaders });
});

it('fails naming a missing exchange without failing other exchanges published to at the same moment', async () => {
  const [missing, ...others] = await Promise.all([
    send(`${BROKER}/?exchange=${EXCHANGE}-missing&routing_key=events`),
    ...Array.from({ length: 10 }, () => send(`${BROKER}/?exchange=${EXCHANGE}&routing_key=events`)),
  ]);
  expect(missing).toMatchObject({ ok: false, reason: expect.stringContaining(`no exchange '${EXCHANGE}-missing'`) });
  expect(others.filter((outcome) => !outcome.ok)).toEqual([]);
  const rabbitmq = transports.byType.rabbitmq as RabbitMqTransport;
  expect(rabbitmq.openConnections).toBe(1);
  for (let index = 0; index < 10; index += 1) await nextMessage();
  expect(await send(`${BROKER}/?exchange=${EXCHANGE}-missing&routing_key=events`)).toMatchObject({ ok: false, reason: expect.stringContaining('NOT_FOUND') });
});

it('fails when nothing listens, and when the broker hangs, within the time-out', async () => {
  const closedPort = await freePort();
  const refused = await send(`amqp://guest:guest@127.0.0.1:${closedPort}/?exchange=x`);
  expect(refused).toMatchObject({ ok: false, reason: expect.stringContaining('ECONNREFUSED') });
  const hanging = await new HangingPort().start();
  try {
    const outcome = await send(`amqp://guest:guest@127.0.0.1:${hanging.port}/?exchange=x`, 800);
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(/^time-out/) });
  } finally {
    await hanging.stop();
  }
});

it('reconnects on the next send after the broker dropped the connection', async () => {
  const relay = await new ResettableRelay(5672).start();
  const url = `amqp://guest:guest@127.0.0.1:${relay.port}/?exchange=${EXCHANGE}&routing_key=events`;
  try {
    expect(await send(url)).toMatchObject({ ok: true });
    await nextMessage();
    relay.resetConnections();
    await waitFor('the drop to be logged', () => log.lines.some((line) => line.includes(`127.0.0.1:${relay.port} closed`)));
    expect(await send(url)).toMatchObject({ ok: true });
    expect(relay.accepted).toBe(2);
    await nextMessage();
  } finally {
    await relay.stop();
  }
});

it('destroys a connection whose broker never confirms, and bounds the publishes waiting on it', async () => {
  const relay = await new ResettableRelay(5672).start();
  const bounded = testTransports(redis, PREFIX, log, { maxPendingPublishesPerConnection: 3 });
  const rabbitmq = bounded.byType.rabbitmq as RabbitMqTransport;
  // A routing key bound to nothing: confirmed, then dropped by the exchange (the test queue stays clean).
  const url = `amqp://guest:guest@127.0.0.1:${relay.port}/?exchange=${EXCHANGE}&routing_key=unrouted`;
  try {
    expect(await send(url, 5000, bounded)).toMatchObject({ ok: true });
    expect(relay.openClients).toBe(1);
    relay.silence();
    // Five at once on the silent connection: three wait for a confirm, two fail at once with no body queued.
    const sends = Array.from({ length: 5 }, () => send(url, 1500, bounded));
    await waitFor('three publishes waiting', () => rabbitmq.pendingPublishes === 3);
    const outcomes = await Promise.all(sends);
    const why = outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.reason));
    expect(why.filter((reason) => /^time-out: 3 publishes already wait for the broker's confirm on this connection$/.test(reason))).toHaveLength(2);
    // One waited out its time-out and destroyed the connection; the two others failed with it at once.
    expect(why.filter((reason) => reason === 'time-out: no confirm from the broker within 1500 ms')).toHaveLength(1);
    expect(why.filter((reason) => reason === 'time-out: no confirm from the broker (the connection was destroyed: the broker stopped acknowledging)')).toHaveLength(2);
    // The silent connection is destroyed, not kept with its pending bodies: its socket closes, nothing waits.
    await waitFor('the silent connection to close', () => relay.openClients === 0, { timeoutMs: 3000 });
    expect(rabbitmq.pendingPublishes).toBe(0);
    expect(rabbitmq.openConnections).toBe(0);
    // The next send connects anew and is confirmed.
    expect(await send(url, 5000, bounded)).toMatchObject({ ok: true });
    expect(relay.accepted).toBe(2);
  } finally {
    await bounded.close();
    await relay.stop();
  }
});

it('refuses a wrong password without writing it anywhere', async () => {
  const outcome = await send(`amqp://guest:${WRONG_PASSWORD}@127.0.0.1:5672/?exchange=${EXCHANGE}`);
  expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining('ACCESS_REFUSED') });
});

it('refuses a private broker host unless private targets are allowed', async () => {
  const strict = testTransports(redis, PREFIX, log, { allowPrivateTargets: false });
  try {
    for (const host of ['127.0.0.1', 'localhost']) {
      const outcome = await send(`amqp://guest:guest@${host}:5672/?exchange=${EXCHANGE}`, 5000, strict);
      expect(outcome).toMatchObject({ ok: false, reason: `refused: broker host ${host} points to a non-public address or does not resolve` });
    }
  } finally {
    await strict.close();
  }
});

it('closes a connection once unused for the idle time', async () => {
  const quick = testTransports(redis, PREFIX, log, { idleCloseMs: 300 });
  try {
    expect(await send(`${BROKER}/?exchange=${EXCHANGE}&routing_key=events`, 5000, quick)).toMatchObject({ ok: true });
    await nextMessage();
    const rabbitmq = quick.byType.rabbitmq as RabbitMqTransport;
    expect(rabbitmq.openConnections).toBe(1);
    await waitFor('the idle connection to close', () => rabbitmq.openConnections === 0);
  } finally {
    await quick.close();
  }
});

it('writes no credential to a log line or a reason', () => {
  expect(reasons.length).toBeGreaterThanOrEqual(5);
  expectNoCredential([...log.lines, ...reasons], [WRONG_PASSWORD]);
});
