import fc from 'fast-check';
import { openApiQuery, openApiSign as libsOpenApiSign } from '@app/signing';
import vectors from '../../signing-vectors.json';
import { openApiSign, signedQuery, signRequest } from './signing';

describe('Open API v2 signing (the client package, apart from libs/signing)', () => {
  it.each(vectors.open_api)('matches the golden vector for $email', (vector) => {
    expect(openApiSign(vector.email, vector.token, vector.timestamp, vector.nonce)).toBe(vector.sign);
    expect(libsOpenApiSign({ email: vector.email, openApiToken: vector.token, timestamp: vector.timestamp, nonce: vector.nonce })).toBe(vector.sign);
  });

  it('signs as libs/signing does, whatever the values', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(), fc.string(), (email, token, timestamp, nonce) => {
        expect(signedQuery({ email, token }, { timestamp, nonce })).toEqual(openApiQuery({ email, openApiToken: token }, { timestamp, nonce }));
      }),
    );
  });

  it('gives each call a new nonce and the current time', () => {
    const now = Math.floor(Date.now() / 1000);
    const first = signedQuery({ email: 'a@example.com', token: 't' });
    const second = signedQuery({ email: 'a@example.com', token: 't' });
    expect(first.nonce).not.toBe(second.nonce);
    expect(Math.abs(Number(first.timestamp) - now)).toBeLessThanOrEqual(1);
    expect(first.sign_version).toBe('v2');
  });

  it('adds the signed query to a request, keeping its own query and body', async () => {
    const request = new Request('http://127.0.0.1:1/open_api_v1/events?limit=5', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    const signed = signRequest(request, { email: 'a@example.com', token: 't' });
    const query = new URL(signed.url).searchParams;
    expect(query.get('limit')).toBe('5');
    expect(query.get('sign')).toBe(openApiSign('a@example.com', 't', query.get('timestamp') ?? '', query.get('nonce') ?? ''));
    await expect(signed.text()).resolves.toBe('{"a":1}');
    expect(signed.headers.get('content-type')).toBe('application/json');
  });
});
