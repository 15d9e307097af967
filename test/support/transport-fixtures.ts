import Redis from 'ioredis';
import { readSecretsKeys, SecretBox } from '@app/runtime';
import { DestinationTransports, type DestinationTransportsOptions } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import type { DestinationTarget, OutgoingDelivery, TransportOutcome } from '../../apps/delivery-worker/src/delivery/destinations/destination-transport';

/** Every line the transports log, to show that no credential is ever among them. */
export class CapturedLog {
  readonly lines: string[] = [];
  log = (message: string): void => void this.lines.push(message);
  warn = (message: string): void => void this.lines.push(message);
}

export function testSecretBox(): SecretBox {
  return new SecretBox(readSecretsKeys({ SECRETS_KEY: process.env.SECRETS_KEY }, false, []));
}

export function testRedis(): Redis {
  return new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
}

/** One worker's transports, on loopback (private targets allowed unless said otherwise). */
export function testTransports(
  redis: Redis,
  redisPrefix: string,
  log: CapturedLog,
  overrides: Partial<DestinationTransportsOptions> = {},
): DestinationTransports {
  return new DestinationTransports({ redis, redisPrefix, secretBox: testSecretBox(), allowPrivateTargets: true, logger: log, ...overrides });
}

let sequence = 0;

/** A delivery as the worker hands it over: the body, its content type and three signature values. */
export function testDelivery(body = '{"action":"Customer_create","message":{"id":1}}', contentType = 'application/json'): OutgoingDelivery {
  sequence += 1;
  const eventId = `evt_transport_${process.pid}_${Date.now()}_${sequence}`;
  return {
    eventId,
    body,
    contentType,
    signatureHeaders: { 'webhook-id': eventId, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': `v1,c2lnbmF0dXJl${sequence}` },
  };
}

export type BrokerType = 'mqtt' | 'nats' | 'rabbitmq';

/** A destination of a broker type at `url`, without auth: the credentials, if any, are in the URL. */
export function brokerTarget(type: BrokerType, url: string): DestinationTarget {
  return { id: `dst_${type}`, type, url, auth: null };
}

export interface BrokerTransportsSuite {
  readonly log: CapturedLog;
  /** The reason of every failed send, for the check that no credential is in one. */
  readonly reasons: string[];
  readonly redis: Redis;
  /** The suite's transports, as one worker holds them. */
  readonly transports: DestinationTransports;
  /** Sends to a destination of the suite's type at `url`, through the suite's transports unless others are given. */
  send(url: string, delivery?: OutgoingDelivery, timeoutMs?: number, through?: DestinationTransports): Promise<TransportOutcome>;
}

/**
 * For the calling file: one worker's transports on the run's Redis under `redisPrefix`, made before its
 * tests and closed after them, and a send to a broker of `type` that keeps each failure's reason.
 */
export function useBrokerTransports(type: BrokerType, redisPrefix: string): BrokerTransportsSuite {
  const suite = { log: new CapturedLog(), reasons: [] as string[] } as { -readonly [K in keyof BrokerTransportsSuite]: BrokerTransportsSuite[K] };
  suite.send = async (url, delivery = testDelivery(), timeoutMs = 5000, through = suite.transports) => {
    const outcome = await through.send(brokerTarget(type, url), delivery, timeoutMs);
    if (!outcome.ok) suite.reasons.push(outcome.reason);
    return outcome;
  };
  beforeAll(() => {
    suite.redis = testRedis();
    suite.transports = testTransports(suite.redis, redisPrefix, suite.log);
  });
  afterAll(async () => {
    await suite.transports?.close();
    await suite.redis?.quit();
  });
  return suite;
}

/** The credentials a test gave its destinations must appear in no log line and no reason. */
export function expectNoCredential(texts: readonly string[], credentials: readonly string[]): void {
  const leaks = texts.flatMap((text) => credentials.filter((credential) => text.includes(credential)).map((credential) => `${credential.slice(0, 6)}… in "${text.slice(0, 80)}"`));
  expect(leaks).toEqual([]);
}
