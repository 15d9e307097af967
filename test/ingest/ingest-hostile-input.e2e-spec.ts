import { request as httpRequest } from 'node:http';
import { DataSource } from 'typeorm';
import { useConfigApiAndIngest } from '../support/config-api-and-ingest';
import { INGEST_HEADERS } from '../support/fixtures';

/**
 * CONTRACT §4 against hostile messages: the depth limit, `__proto__`, keys named like Object.prototype's
 * members, and the token checked before the body is read. Every case is sent both ways ingest serves
 * events: ahead of Express (the plain path) and through Nest (`?via=nest`).
 */
const suite = useConfigApiAndIngest();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const WAYS = ['', '?via=nest'] as const;
let counter = 0;

function uniqueId(label: string): string {
  counter += 1;
  return `hostile-${label}-${process.pid}-${Date.now()}-${counter}`;
}

/** A message of `levels` levels in all (the message is level 1), nested under `x.a.a…`. */
function nestedText(levels: number): string {
  return `{"id":1,"x":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 2)}}`;
}

function deepPath(levels: number): string {
  return ['message', 'x', ...new Array<string>(levels - 2).fill('a')].join('.');
}

async function post(path: string, body: string, headers: Record<string, string> = INGEST_HEADERS): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${suite.ingest.url}${path}`, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}

function envelope(messageText: string, eventId = uniqueId('e')): string {
  return `{"account_id":${suite.account.id},"action":"Customer_create","event_id":"${eventId}","message":${messageText}}`;
}

async function storedMessage(eventId: string): Promise<unknown> {
  const rows = await suite.ingest.app.get(DataSource).query<{ message: unknown }[]>('SELECT message FROM events WHERE event_id = $1', [eventId]);
  return rows[0]?.message;
}

describe.each(WAYS)('ingest of hostile messages (%s)', (query) => {
  it('accepts 32 levels and answers 422 naming the path where 33 begin', async () => {
    expect((await post(`/v1/events${query}`, envelope(nestedText(32)))).status).toBe(202);
    const deeper = await post(`/v1/events${query}`, envelope(nestedText(33)));
    expect(deeper.status).toBe(422);
    expect(deeper.body.details).toEqual([{ path: deepPath(33), problem: expect.stringContaining('32 levels') }]);
  });

  it('answers 422, not 500, for thousands of levels of objects or arrays', async () => {
    for (const message of [nestedText(5000), `{"id":1,"x":${'['.repeat(50_000)}${']'.repeat(50_000)}}`]) {
      const answer = await post(`/v1/events${query}`, envelope(message));
      expect(answer.status).toBe(422);
      expect(answer.body.details[0].path).toMatch(/^message\.x/);
    }
  });

  it('holds the limit with an envelope the plain check hands to the validation pipe', async () => {
    const deepExtra = `{"account_id":${suite.account.id},"action":"Customer_create","message":{"id":1},"extra":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    expect((await post(`/v1/events${query}`, deepExtra)).status).toBe(422);
    const badAccountDeepMessage = `{"account_id":"x","action":"Customer_create","message":${nestedText(20_000)}}`;
    const answer = await post(`/v1/events${query}`, badAccountDeepMessage);
    expect(answer.status).toBe(422);
    expect(answer.body.details[0].path).toBe(deepPath(33));
  });

  it('refuses __proto__ anywhere in a message with 422 naming it', async () => {
    for (const [message, path] of [
      ['{"id":1,"__proto__":{"polluted":true}}', 'message.__proto__'],
      ['{"id":1,"cellphones":[{"id":1,"content":"x","__proto__":{}}]}', 'message.cellphones[0].__proto__'],
    ] as const) {
      const answer = await post(`/v1/events${query}`, envelope(message));
      expect(answer.status).toBe(422);
      expect(answer.body.details).toEqual([{ path, problem: expect.stringContaining('__proto__') }]);
    }
    expect(({} as Json).polluted).toBeUndefined();
  });

  it('keeps constructor, toString, valueOf, hasOwnProperty and the like unchanged at every depth', async () => {
    const message = {
      id: 7,
      constructor: 'c',
      toString: 1,
      valueOf: null,
      hasOwnProperty: true,
      isPrototypeOf: [1, { constructor: { toString: 'deep' } }],
      cellphones: [{ id: 1, content: '555', valueOf: 'v' }],
      nested: { propertyIsEnumerable: { toLocaleString: 'x' } },
    };
    const eventId = uniqueId('keys');
    expect((await post(`/v1/events${query}`, envelope(JSON.stringify(message), eventId))).status).toBe(202);
    expect(await storedMessage(eventId)).toEqual(message);

    const batchId = uniqueId('keys-batch');
    const batch = await post(`/v1/events/batch${query}`, `{"events":[${envelope(JSON.stringify(message), batchId)}]}`);
    expect(batch.body.results).toEqual([{ index: 0, event_id: batchId, status: 'accepted' }]);
    expect(await storedMessage(batchId)).toEqual(message);
  });

  it('rejects only the hostile items of a batch', async () => {
    const good = uniqueId('good');
    const answer = await post(
      `/v1/events/batch${query}`,
      `{"events":[${envelope(nestedText(40))},${envelope('{"id":1,"__proto__":1}')},${envelope('{"id":2,"constructor":1}', good)}]}`,
    );
    expect(answer.status).toBe(202);
    expect(answer.body.results[0]).toMatchObject({ index: 0, status: 'rejected', details: [{ path: `events[0].${deepPath(33)}` }] });
    expect(answer.body.results[1]).toMatchObject({ index: 1, status: 'rejected', details: [{ path: 'events[1].message.__proto__' }] });
    expect(answer.body.results[2]).toEqual({ index: 2, event_id: good, status: 'accepted' });
    expect(await storedMessage(good)).toEqual({ id: 2, constructor: 1 });
  });
});

describe('the ingest token is checked before the body is read', () => {
  const unauthorized = [
    ['no token', { 'content-type': 'application/json' }],
    ['a wrong token', { 'content-type': 'application/json', authorization: 'Bearer wrong' }],
  ] as const;

  it.each(unauthorized)('answers 401 to %s whatever the body, on every route and spelling', async (_label, headers) => {
    for (const path of ['/v1/events', '/v1/events?via=nest', '/v1/events/batch', '/v1/events/', '/V1/EVENTS', '/v1/bot/task-push', '/v1/bot/message-trigger?x=1']) {
      for (const body of ['{bad', '"text"', nestedText(5000), '{"__proto__":1}']) {
        const answer = await post(path, body, headers);
        expect({ path, body: body.slice(0, 10), status: answer.status }).toEqual({ path, body: body.slice(0, 10), status: 401 });
        expect(answer.body.error).toBe('unauthorized');
      }
    }
  });

  it('answers 401 to a body over the limit without reading it (413 needs a token)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${suite.ingest.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) } });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      request.on('error', reject);
      // Only the first bytes are ever sent: the answer must come without the rest.
      request.write('{"account_id":');
    });
    expect(status).toBe(401);
    const withToken = await post('/v1/events', JSON.stringify({ blob: 'x'.repeat(1024 * 1024 + 10) }));
    expect(withToken.status).toBe(413);
  });
});
