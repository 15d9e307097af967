import { EventCallbacks } from '../event-callbacks';
import { CredentialsRefused, feedEnd, FeedUnavailable, feedPage } from './feed';

/** A client whose calls get these answers in turn (the e2e tests use the real service). */
function answering(...answers: (() => Response)[]): { client: EventCallbacks; urls: URL[] } {
  const urls: URL[] = [];
  const fetch = (request: Request): Promise<Response> => {
    urls.push(new URL(request.url));
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return Promise.resolve(next());
  };
  return { client: new EventCallbacks({ baseUrl: 'http://127.0.0.1:3000/', email: 'a@example.com', token: 't', fetch: fetch as typeof globalThis.fetch }), urls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const page = (items: string[], next: string) => json(200, { code: 1000, message: 'OK', items: items.map((id) => ({ event_id: id, action: 'Customer_create', message: {}, created_at: '2026-01-01T00:00:00.000Z' })), next_cursor: next });
const error = (code: number, message: string) => ({ code, message: 'Unknown error', exception: { message } });

describe('reading the feed', () => {
  it('signs each call and asks for the page after the cursor', async () => {
    const { client, urls } = answering(page(['evt_1'], '1.1'));
    await expect(feedPage(client, '0.5', 500)).resolves.toMatchObject({ items: [{ event_id: 'evt_1' }], next_cursor: '1.1' });
    expect(urls[0].pathname).toBe('/open_api_v1/events');
    expect(Object.fromEntries(urls[0].searchParams)).toMatchObject({ after: '0.5', limit: '500', email: 'a@example.com', sign_version: 'v2', sign: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('waits out a 429 for its Retry-After, then goes on', async () => {
    const { client, urls } = answering(json(429, error(2000, 'rate limit of 60 calls per minute exceeded; retry in 1 s'), { 'retry-after': '1' }), page([], '2.0'));
    const started = Date.now();
    await expect(feedPage(client, undefined, 100)).resolves.toMatchObject({ next_cursor: '2.0' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(urls[0].searchParams.get('nonce')).not.toBe(urls[1].searchParams.get('nonce'));
  });

  it('names refused credentials (401) and an unavailable service (503) apart', async () => {
    await expect(feedPage(answering(json(401, error(2059, 'unknown email or wrong sign'))).client, undefined, 1)).rejects.toThrow(
      new CredentialsRefused('the service refused the credentials (401, code 2059: unknown email or wrong sign)'),
    );
    await expect(feedPage(answering(json(503, error(2000, 'replay protection is unavailable'))).client, undefined, 1)).rejects.toBeInstanceOf(FeedUnavailable);
  });

  it('finds the end by paging until a page comes back empty', async () => {
    const { client, urls } = answering(page(['a', 'b'], '1.2'), page(['c'], '1.3'), page([], '1.3'));
    await expect(feedEnd(client, 2)).resolves.toBe('1.3');
    expect(urls.map((url) => url.searchParams.get('after'))).toEqual([null, '1.2', '1.3']);
  });
});
