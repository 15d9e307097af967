import { HttpException } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { createValidationPipe } from '@app/runtime';
import { batchEnvelope, ingestEnvelope, plainEnvelope } from './ingest-envelope';
import { IngestBatchDto, IngestEventDto } from './ingest-event.dto';

/**
 * The plain envelope check must agree with the global ValidationPipe on every input: the same DTO
 * when valid, the same 422 body otherwise. Inputs are built as JSON text, as a request body would be,
 * so keys such as `__proto__` are real own keys.
 */
const pipe = createValidationPipe();

async function settle(run: () => Promise<unknown>): Promise<{ ok: unknown } | { error: unknown }> {
  try {
    return { ok: await run() };
  } catch (error) {
    return { error: error instanceof HttpException ? { status: error.getStatus(), body: error.getResponse() } : error };
  }
}

const viaPipe = (value: unknown, metatype: new () => object) => settle(() => pipe.transform(value, { type: 'body', metatype, data: undefined }));

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
      const expected = await viaPipe(JSON.parse(text), IngestEventDto);
      const actual = await settle(() => ingestEnvelope(JSON.parse(text)));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) expect({ text, actual }).toEqual({ text, actual: expected });
      expect(actual).toEqual(expected);
    }
    expect(plain).toBeGreaterThan(5);
  });
});

describe('batchEnvelope', () => {
  it('agrees with the ValidationPipe on the batch shape and on what each item becomes', async () => {
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
      expect('ok' in actual).toBe(true);
      // Items are judged later, each as plainEnvelope or a class-transformer copy: both must come out alike.
      const judged = (list: unknown) =>
        (list as unknown[]).map((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? (plainEnvelope(item) ?? plainToInstance(IngestEventDto, item)) : item));
      expect(judged((actual as { ok: unknown[] }).ok)).toEqual(judged((expected.ok as IngestBatchDto).events));
    }
  });
});
