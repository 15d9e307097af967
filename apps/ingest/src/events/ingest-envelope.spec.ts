import { isPlainObject, withoutPrototypeMemberKeys } from '@app/payloads';
import { createValidationPipe, errorAnswer, knownErrorStatus } from '@app/runtime';
import { batchEnvelope, ingestEnvelope, itemEnvelope, plainEnvelope } from './ingest-envelope';
import { IngestBatchDto, IngestEventDto } from './ingest-event.dto';

/**
 * The plain envelope check must agree with the global ValidationPipe on every input: the same DTO
 * when valid, the same 422 body otherwise, on the contract's terms (CONTRACT §4), where the pipe's own
 * copy falls short: `__proto__` anywhere and envelope fields named like Object.prototype's members are
 * refused, and the message is kept as sent (the copy drops `constructor`, `toString`…). Inputs are
 * built as JSON text, as a request body would be, so keys such as `__proto__` are real own keys.
 */
const pipe = createValidationPipe();

async function settle(run: () => Promise<unknown>): Promise<{ ok: unknown } | { error: unknown }> {
  try {
    return { ok: await run() };
  } catch (error) {
    const status = knownErrorStatus(error);
    return { error: status === null ? error : errorAnswer(error, '/v1/events') };
  }
}

const viaPipe = (value: unknown, metatype: new () => object) => settle(() => pipe.transform(value, { type: 'body', metatype, data: undefined }));

/** What the contract refuses before any pipe: `__proto__` anywhere, or an envelope field named like an Object.prototype member. */
function refusedByContract(text: string): boolean {
  const body: unknown = JSON.parse(text);
  return text.includes('"__proto__"') || (isPlainObject(body) && Object.keys(body).some((key) => key in Object.prototype));
}

/** The pipe's answer for a body the contract does not refuse, with the message as it was sent. */
async function expectedAnswer(text: string): Promise<{ ok: unknown } | { error: unknown }> {
  const body = JSON.parse(text) as Record<string, unknown>;
  const answer = await viaPipe(withoutPrototypeMemberKeys(body), IngestEventDto);
  if ('ok' in answer) (answer.ok as IngestEventDto).message = body.message as Record<string, unknown>;
  return answer;
}

const FIELD_TEXTS: Record<string, (string | undefined)[]> = {
  account_id: ['42', '1', '2147483647', '0', '-1', '1.5', '"42"', 'null', '2147483648', 'true', undefined],
  action: ['"Customer_create"', '"ImSubSession_close"', '"customer_create"', '""', 'null', '5', '"toString"', undefined],
  message: [
    '{"id":1,"nick_name":"Ann","tags":["a"],"nested":{"deep":[{"x":null}]}}',
    '{}',
    '[]',
    'null',
    '"text"',
    '{"constructor":1}',
    '{"a":{"toString":"x"}}',
    '{"a":[{"__proto__":{"polluted":true}}]}',
    '{"hasOwnProperty":2,"id":3}',
    undefined,
  ],
  event_id: ['"order-1"', `"${'x'.repeat(128)}"`, `"${'x'.repeat(129)}"`, '""', '"has space"', '"ü"', '5', 'null', '"\\u0000"', undefined],
  extra: [undefined, '1', '{"a":1}'],
  ['__proto__']: [undefined, '{"x":1}'],
  constructor: [undefined, '"c"'],
};

function bodyText(choice: Record<string, string | undefined>): string {
  const parts = Object.entries(choice)
    .filter(([, text]) => text !== undefined)
    .map(([key, text]) => `${JSON.stringify(key)}:${text}`);
  return `{${parts.join(',')}}`;
}

const BASE: Record<string, string | undefined> = Object.fromEntries(Object.entries(FIELD_TEXTS).map(([key, texts]) => [key, texts[0]]));

/** The valid base, every single-field variation of it, and a deterministic spread of combinations. */
function bodies(): string[] {
  const texts = new Set<string>([bodyText(BASE)]);
  for (const [key, values] of Object.entries(FIELD_TEXTS)) for (const value of values) texts.add(bodyText({ ...BASE, [key]: value }));
  let seed = 7;
  const next = (limit: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % limit;
  };
  for (let round = 0; round < 1500; round += 1) {
    texts.add(bodyText(Object.fromEntries(Object.entries(FIELD_TEXTS).map(([key, values]) => [key, values[next(values.length)]]))));
  }
  return [...texts];
}

describe('ingestEnvelope', () => {
  it('takes the plain path for a valid envelope and keeps the message object as sent', () => {
    const body = JSON.parse(bodyText(BASE)) as Record<string, unknown>;
    const dto = plainEnvelope(body);
    expect(dto).toBeInstanceOf(IngestEventDto);
    expect(dto?.message).toBe(body.message);
    expect(plainEnvelope(JSON.parse(bodyText({ ...BASE, event_id: undefined })))).toBeInstanceOf(IngestEventDto);
  });

  it.each([['[]'], ['"text"'], ['null'], ['5'], ['{}']])('answers %s as the ValidationPipe does', async (text) => {
    const value: unknown = JSON.parse(text);
    expect(await settle(() => ingestEnvelope(value))).toEqual(await viaPipe(value, IngestEventDto));
    expect(await settle(() => ingestEnvelope(undefined))).toEqual(await viaPipe(undefined, IngestEventDto));
  });

  it('agrees with the ValidationPipe on every generated envelope: same DTO, or same 422 body', async () => {
    let plain = 0;
    for (const text of bodies()) {
      if (plainEnvelope(JSON.parse(text))) plain += 1;
      const actual = await settle(() => ingestEnvelope(JSON.parse(text)));
      if (refusedByContract(text)) {
        expect({ text, actual }).toMatchObject({ text, actual: { error: { status: 422, body: { error: 'validation_failed' } } } });
        continue;
      }
      const expected = await expectedAnswer(text);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) expect({ text, actual }).toEqual({ text, actual: expected });
      expect(actual).toEqual(expected);
    }
    expect(plain).toBeGreaterThan(5);
  });
});

describe('itemEnvelope', () => {
  it('judges each batch item as ingestEnvelope judges a single event, with paths under the item', async () => {
    for (const text of bodies()) {
      const single = await settle(() => ingestEnvelope(JSON.parse(text)));
      const item = itemEnvelope(JSON.parse(text) as Record<string, unknown>, 'events[3]');
      if ('ok' in single) {
        expect({ text, item }).toEqual({ text, item: single.ok });
      } else {
        const details = ((single.error as { body: { details: { path: string; problem: string }[] } }).body.details ?? []).map((detail) => ({
          ...detail,
          path: detail.path ? `events[3].${detail.path}` : 'events[3]',
        }));
        expect({ text, item }).toEqual({ text, item: details });
      }
    }
  });
});

describe('batchEnvelope', () => {
  it('agrees with the ValidationPipe on the batch shape and hands every item on as sent', async () => {
    const items = bodies().slice(0, 300);
    const texts = [
      `{"events":[${items.join(',')}]}`,
      `{"events":[${items.join(',')}],"extra":1}`,
      '{"events":{}}',
      '{"events":null}',
      '{}',
      '[]',
      `{"events":[${Array.from({ length: 1001 }, () => '1').join(',')}]}`,
      '{"events":[1,null,"x",[]]}',
    ];
    for (const text of texts) {
      const expected = await viaPipe(JSON.parse(text), IngestBatchDto);
      const actual = await settle(() => batchEnvelope(JSON.parse(text)));
      if ('error' in expected) {
        expect(actual).toEqual(expected);
        continue;
      }
      // Items are judged later, one by one (itemEnvelope): here they pass untouched, none copied.
      expect(actual).toEqual({ ok: (JSON.parse(text) as IngestBatchDto).events });
    }
  });
});
