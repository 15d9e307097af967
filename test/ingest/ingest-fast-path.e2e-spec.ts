import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestTokenGuard } from '@app/runtime';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, INGEST_HEADERS, type TestAccount } from '../support/fixtures';
import { SAMPLE_MESSAGES } from '@app/payloads';

/**
 * POST /v1/events and /v1/events/batch are served ahead of Express (EventsFastPath). A request to
 * `/v1/events?via=nest` is not: Express routes it to EventsController through Nest's whole pipeline.
 * Every case below is sent both ways and must get the same status, body and headers.
 */
let configApi: RunningApp;
let ingest: RunningApp;
let account: TestAccount;

/** Headers that differ between two answers by nature. */
const VARYING = new Set(['date', 'etag', 'content-length', 'connection', 'keep-alive']);

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string>;
}

async function send(path: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${ingest.url}${path}`, { method: 'POST', headers, body });
  const kept: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!VARYING.has(name)) kept[name] = value;
  });
  return { status: response.status, text: await response.text(), headers: kept };
}

/** The fast path's answer and Nest's for the same request, plus how many of each went through Nest's guard. */
async function bothWays(path: string, body: string, headers: Record<string, string> = INGEST_HEADERS) {
  const guard = jest.spyOn(IngestTokenGuard.prototype, 'canActivate');
  try {
    const fast = await send(path, body, headers);
    const nestGuardCallsFast = guard.mock.calls.length;
    const nest = await send(`${path}?via=nest`, body, headers);
    return { fast, nest, nestGuardCallsFast, nestGuardCallsNest: guard.mock.calls.length - nestGuardCallsFast };
  } finally {
    guard.mockRestore();
  }
}

function event(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { account_id: account.id, action: 'Customer_destroy', message: structuredClone(SAMPLE_MESSAGES.Customer_destroy), ...fields };
}

beforeAll(async () => {
  configApi = await startApp(ConfigApiModule);
  ingest = await startApp(IngestModule);
  account = await createAccount(configApi);
});

afterAll(async () => {
  await ingest?.close();
  await configApi?.close();
});

const HANDED_ON = new Set(['a form body', 'a text body']);

describe('the ingest routes served ahead of Express answer exactly as Nest does', () => {
  const bearer = INGEST_HEADERS.authorization;
  const json = { 'content-type': 'application/json' };
  const cases: [string, string, () => string, Record<string, string>?][] = [
    ['no token', '/v1/events', () => JSON.stringify(event()), json],
    ['a wrong token', '/v1/events', () => JSON.stringify(event()), { ...json, authorization: 'Bearer wrong' }],
    ['a batch without a token', '/v1/events/batch', () => JSON.stringify({ events: [event()] }), json],
    ['invalid JSON', '/v1/events', () => '{"account_id": ', undefined],
    ['invalid JSON without a token', '/v1/events', () => '{"account_id": ', json],
    ['a JSON string (strict parser)', '/v1/events', () => '"text"', undefined],
    ['an empty JSON body', '/v1/events', () => '', { ...json, authorization: bearer, 'content-length': '0' }],
    ['a body over 1 MiB', '/v1/events', () => JSON.stringify(event({ message: { id: 1, blob: 'x'.repeat(1024 * 1024) } })), undefined],
    ['a batch over 1 MiB', '/v1/events/batch', () => JSON.stringify({ events: [event({ message: { blob: 'x'.repeat(1024 * 1024) } })] }), undefined],
    ['an unsupported charset', '/v1/events', () => JSON.stringify(event()), { ...json, 'content-type': 'application/json; charset=latin1', authorization: bearer }],
    ['a form body', '/v1/events', () => 'account_id=1&action=Customer_destroy', { 'content-type': 'application/x-www-form-urlencoded', authorization: bearer }],
    ['a text body', '/v1/events', () => JSON.stringify(event()), { 'content-type': 'text/plain', authorization: bearer }],
    ['an unknown action', '/v1/events', () => JSON.stringify(event({ action: 'Customer_explode' })), undefined],
    ['an unknown field', '/v1/events', () => JSON.stringify(event({ extra: 1 })), undefined],
    ['an array body', '/v1/events', () => '[1, 2]', undefined],
    ['a bad message', '/v1/events', () => JSON.stringify(event({ action: 'Customer_create', message: { id: 'x', cellphones: [{ id: 'y' }] } })), undefined],
    ['an unknown account', '/v1/events', () => JSON.stringify(event({ account_id: 2_000_000_000, event_id: 'fast-path-unknown' })), undefined],
    ['a batch that is not a list', '/v1/events/batch', () => JSON.stringify({ events: 'none' }), undefined],
    ['a batch with extra fields', '/v1/events/batch', () => JSON.stringify({ events: [], more: 1 }), undefined],
    ['a batch of bad items', '/v1/events/batch', () => JSON.stringify({ events: [1, event({ action: 'nope', event_id: 'fast-path-bad' }), event({ account_id: 2_000_000_000, event_id: 'fast-path-none' })] }), undefined],
  ];

  it.each(cases)('%s', async (label, path, body, headers) => {
    const { fast, nest, nestGuardCallsFast } = await bothWays(path, body(), headers ?? INGEST_HEADERS);
    expect(fast).toEqual(nest);
    // A body that is not JSON is not parsed ahead of Express: Nest judges it, as before.
    expect(nestGuardCallsFast).toBe(HANDED_ON.has(label) ? 1 : 0);
  });

  it('accepts, then answers the duplicate, with the same headers as Nest, bypassing its pipeline', async () => {
    const stamp = `${process.pid}-${Date.now()}`;
    const first = await bothWays('/v1/events', JSON.stringify(event({ event_id: `fast-path-a-${stamp}` })));
    expect(first.nestGuardCallsFast).toBe(0);
    expect(first.nestGuardCallsNest).toBe(1);
    expect([first.fast.status, JSON.parse(first.fast.text)]).toEqual([202, { event_id: `fast-path-a-${stamp}`, status: 'accepted' }]);
    expect(first.nest.headers).toEqual(first.fast.headers);
    expect(first.fast.headers['content-security-policy']).toContain("default-src 'self'");
    expect(first.fast.headers['x-content-type-options']).toBe('nosniff');
    expect(first.fast.headers['content-type']).toBe('application/json; charset=utf-8');

    const again = await bothWays('/v1/events', JSON.stringify(event({ event_id: `fast-path-a-${stamp}` })));
    expect(again.fast).toEqual({ ...again.nest });
    expect(again.fast.status).toBe(200);
    expect(JSON.parse(again.fast.text)).toEqual({ event_id: `fast-path-a-${stamp}`, status: 'duplicate' });

    const batch = await bothWays('/v1/events/batch', JSON.stringify({ events: [event({ event_id: `fast-path-a-${stamp}` }), event({ event_id: `fast-path-b-${stamp}` })] }));
    expect(batch.nestGuardCallsFast).toBe(0);
    expect(batch.fast.status).toBe(202);
    expect(batch.fast.headers).toEqual(batch.nest.headers);
    expect(JSON.parse(batch.fast.text)).toEqual({
      results: [
        { index: 0, event_id: `fast-path-a-${stamp}`, status: 'duplicate' },
        { index: 1, event_id: `fast-path-b-${stamp}`, status: 'accepted' },
      ],
    });
    expect(JSON.parse(batch.nest.text).results.map((result: { status: string }) => result.status)).toEqual(['duplicate', 'duplicate']);
  });

  it('sets the same weak ETag as Express for the same body', async () => {
    const { fast, nest } = await bothWays('/v1/events', JSON.stringify(event({ extra: 1 })));
    const fastTag = (await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(event({ extra: 1 })) })).headers.get('etag');
    const nestTag = (await fetch(`${ingest.url}/v1/events?via=nest`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(event({ extra: 1 })) })).headers.get('etag');
    expect(fast.text).toBe(nest.text);
    expect(fastTag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    expect(fastTag).toBe(nestTag);
  });
});
