import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, signWebhook as libsSignWebhook } from '@app/signing';
import vectors from '../../signing-vectors.json';
import { signWebhook, verifyWebhook, webhookSignature, WebhookVerificationError } from './webhooks';

const [reference] = vectors.webhooks;
const at = (seconds: number): { now: Date } => ({ now: new Date(seconds * 1000) });

describe('Standard Webhooks verification (the client package)', () => {
  it.each(vectors.webhooks)('signs the golden vector $id', (vector) => {
    expect(webhookSignature(vector.secret, vector.id, vector.timestamp, vector.body)).toBe(vector.signature);
    expect(libsSignWebhook([vector.secret], vector.id, vector.timestamp, vector.body)['webhook-signature']).toBe(vector.signature);
    const headers = { 'webhook-id': vector.id, 'webhook-timestamp': String(vector.timestamp), 'webhook-signature': vector.signature };
    expect(() => verifyWebhook(vector.secret, headers, vector.body, at(vector.timestamp))).not.toThrow();
    expect(() => verifyWebhook(vector.secret, headers, Buffer.from(vector.body), at(vector.timestamp + 299))).not.toThrow();
  });

  it('accepts what the service signs, with either secret during a rotation', () => {
    const next = generateSigningSecret();
    const body = '{"action":"Customer_create","message":{"id":7}}';
    const now = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = { ...libsSignWebhook([next, reference.secret], 'evt_rot', now, body) };
    expect(() => verifyWebhook(reference.secret, headers, body)).not.toThrow();
    expect(() => verifyWebhook(next, new Headers({ ...headers }), body)).not.toThrow();
  });

  it('is what the standardwebhooks reference library accepts', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signWebhook(reference.secret, 'evt_ref', now, reference.body);
    expect(new Webhook(reference.secret).verify(reference.body, { ...headers })).toEqual(JSON.parse(reference.body));
  });

  it('throws on a changed body, another secret, a stale or future timestamp and missing headers', () => {
    const headers = { 'webhook-id': reference.id, 'webhook-timestamp': String(reference.timestamp), 'webhook-signature': reference.signature };
    const check = (secret: string, sent: Record<string, string>, body: string, seconds = reference.timestamp) => () => verifyWebhook(secret, sent, body, at(seconds));
    expect(check(reference.secret, headers, `${reference.body} `)).toThrow(WebhookVerificationError);
    expect(check(generateSigningSecret(), headers, reference.body)).toThrow('no webhook-signature matches the secret');
    expect(check(reference.secret, headers, reference.body, reference.timestamp + 301)).toThrow('too old');
    expect(check(reference.secret, headers, reference.body, reference.timestamp - 301)).toThrow('too far in the future');
    expect(check(reference.secret, { 'webhook-id': reference.id, 'webhook-timestamp': String(reference.timestamp) }, reference.body)).toThrow('missing');
    expect(check(reference.secret, { ...headers, 'webhook-signature': `v2,${reference.signature.slice(3)}` }, reference.body)).toThrow(WebhookVerificationError);
  });

  it('reads header names in any case and takes the first of repeated values', () => {
    const headers = { 'Webhook-Id': reference.id, 'WEBHOOK-TIMESTAMP': [String(reference.timestamp)], 'webhook-signature': `v1,AAAA ${reference.signature}` };
    expect(() => verifyWebhook(reference.secret, headers, reference.body, at(reference.timestamp))).not.toThrow();
  });
});
