import Redis from 'ioredis';
import { readSecretsKeys, SecretBox } from '@app/runtime';
import { DestinationTransports, type DestinationTransportsOptions } from '../../apps/delivery-worker/src/delivery/destinations/destination-transports';
import type { OutgoingDelivery } from '../../apps/delivery-worker/src/delivery/destinations/destination-transport';

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

/** The credentials a test gave its destinations must appear in no log line and no reason. */
export function expectNoCredential(texts: readonly string[], credentials: readonly string[]): void {
  const leaks = texts.flatMap((text) => credentials.filter((credential) => text.includes(credential)).map((credential) => `${credential.slice(0, 6)}… in "${text.slice(0, 80)}"`));
  expect(leaks).toEqual([]);
}
