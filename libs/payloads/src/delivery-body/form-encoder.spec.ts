import { asFormParsed, parseFormBody } from '../../../../test/support/form-expectation';
import { SAMPLE_MESSAGES } from '../events/sample-messages';
import { encodeFormBody, formEscape } from './form-encoder';



/** Deterministic pseudo-random numbers (mulberry32), so a failing case can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = ['a b', 'x&y=z', '100%', 'plus+sign', '中文', 'emoji 😀', "quote'\"", '~!*()', 'line\nbreak', 'tab\t', '#hash', '/path?q=1', ''];

function randomText(random: () => number): string {
  if (random() < 0.3) return TRICKY[Math.floor(random() * TRICKY.length)];
  const length = Math.floor(random() * 8);
  let text = '';
  for (let index = 0; index < length; index += 1) text += String.fromCodePoint(32 + Math.floor(random() * 0x2ff));
  return text.replace(/[[\]]/g, '_');
}

function randomKey(random: () => number): string {
  // Letters first: a key made only of digits reads back as an array index in every bracket parser.
  return `k${randomText(random)}`;
}

function randomValue(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth > 0 && pick < 0.2) {
    return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [randomKey(random), randomValue(random, depth - 1)]));
  }
  if (depth > 0 && pick < 0.4) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth - 1));
  if (pick < 0.5) return null;
  if (pick < 0.6) return random() < 0.5;
  if (pick < 0.75) return Math.round((random() - 0.5) * 1e6) / (random() < 0.5 ? 1 : 100);
  return randomText(random);
}

describe('encodeFormBody', () => {
  it('writes the contract example exactly', () => {
    expect(encodeFormBody('Customer_create', { id: 1, tags: ['vip'] })).toBe('action=Customer_create&message[id]=1&message[tags][]=vip');
  });

  it('repeats key[]= for arrays of scalars and indexes arrays of objects', () => {
    const body = encodeFormBody('Customer_create', {
      tags: ['a', 'b'],
      cellphones: [
        { id: 1, content: '13800138000' },
        { id: 2, content: '+86 21' },
      ],
    });
    expect(body).toBe(
      'action=Customer_create&message[tags][]=a&message[tags][]=b' +
        '&message[cellphones][0][id]=1&message[cellphones][0][content]=13800138000' +
        '&message[cellphones][1][id]=2&message[cellphones][1][content]=%2B86+21',
    );
  });

  it('writes null as key=, booleans as words, numbers as JSON does', () => {
    expect(encodeFormBody('A', { description: null, is_blocked: false, vip: true, score: 12.5, big: 1e21, neg: -3 })).toBe(
      'action=A&message[description]=&message[is_blocked]=false&message[vip]=true&message[score]=12.5&message[big]=1e%2B21&message[neg]=-3',
    );
  });

  it('leaves out empty arrays and empty objects, at any depth', () => {
    expect(encodeFormBody('A', { tags: [], custom_fields: {}, nested: { inner: [], deeper: {} }, id: 1 })).toBe('action=A&message[id]=1');
    expect(encodeFormBody('A', {})).toBe('action=A');
  });

  it('indexes arrays that mix scalars and containers, and nests arrays inside them', () => {
    expect(encodeFormBody('A', { mixed: ['x', { y: 1 }], grid: [[1, 2], [3]] })).toBe(
      'action=A&message[mixed][0]=x&message[mixed][1][y]=1&message[grid][0][]=1&message[grid][0][]=2&message[grid][1][]=3',
    );
  });

  it('keeps null elements of scalar arrays as empty values', () => {
    expect(encodeFormBody('A', { organization_id: [null, 5001] })).toBe('action=A&message[organization_id][]=&message[organization_id][]=5001');
  });

  it('escapes names and values with the WHATWG form rules, keeping only the structural brackets literal', () => {
    expect(encodeFormBody('A', { 'odd key': 'a&b=c', 'br[ack]et': '[x]', 中: '文 😀' })).toBe(
      'action=A&message[odd+key]=a%26b%3Dc&message[br%5Back%5Det]=%5Bx%5D&message[%E4%B8%AD]=%E6%96%87+%F0%9F%98%80',
    );
  });

  it('spells the stored action and message the same way as a JSON round trip would see them', () => {
    expect(encodeFormBody('A', JSON.parse('{"z":1,"a":{"y":[true,null]}}'))).toBe('action=A&message[z]=1&message[a][y][]=true&message[a][y][]=');
  });
});

describe('formEscape', () => {
  it('matches URLSearchParams on every character class', () => {
    const samples = [...TRICKY, ' ', '*-._', 'AZaz09', '\u0000\u001f\u007f', 'é', '\ud83d\ude00', 'lone \ud800 surrogate', 'lone \udc00 low'];
    for (let code = 0; code < 0x300; code += 1) samples.push(String.fromCharCode(code));
    for (const sample of samples) {
      expect(formEscape(sample)).toBe(new URLSearchParams([['', sample]]).toString().slice(1));
    }
  });

  it('matches URLSearchParams on random strings', () => {
    const random = seeded(7);
    for (let round = 0; round < 2000; round += 1) {
      let text = '';
      for (let index = 0; index < 12; index += 1) text += String.fromCharCode(Math.floor(random() * 0xffff));
      expect(formEscape(text)).toBe(new URLSearchParams([['', text]]).toString().slice(1));
    }
  });
});

describe('form bodies read back with qs', () => {
  it.each(Object.entries(SAMPLE_MESSAGES))('%s reads back as the message with string values', (action, message) => {
    const parsed = parseFormBody(encodeFormBody(action, message));
    expect(parsed).toEqual({ action, message: asFormParsed(message) });
  });

  it('reads back 500 random messages', () => {
    const random = seeded(20240315);
    for (let round = 0; round < 500; round += 1) {
      const message = Object.fromEntries(Array.from({ length: 1 + Math.floor(random() * 5) }, () => [randomKey(random), randomValue(random, 4)]));
      const body = encodeFormBody('Customer_create', message);
      const expected = asFormParsed(message);
      const wanted = expected === undefined ? { action: 'Customer_create' } : { action: 'Customer_create', message: expected };
      // The round number in both sides names the failing case.
      expect({ round, parsed: parseFormBody(body) }).toEqual({ round, parsed: wanted });
    }
  });

  it('agrees with the WHATWG parser on the flat name/value pairs', () => {
    const message = SAMPLE_MESSAGES.ImSubSession_close;
    const body = encodeFormBody('ImSubSession_close', message);
    const pairs = [...new URLSearchParams(body)];
    expect(pairs[0]).toEqual(['action', 'ImSubSession_close']);
    expect(pairs).toContainEqual(['message[im_sub_session_log][0][ticket_ids][]', '40001']);
    expect(pairs).toContainEqual(['message[im_sub_session_log][0][chatapp_info][name]', 'service_account_demo']);
  });
});

describe('form bodies of hostile depth', () => {
  it('encodes 100,000 levels of objects and of arrays without overflowing the stack', () => {
    let objects: unknown = 'bottom';
    let arrays: unknown = ['bottom'];
    for (let level = 0; level < 100_000; level += 1) {
      objects = { a: objects };
      arrays = [arrays];
    }
    const objectBody = encodeFormBody('Customer_create', { id: 1, deep: objects });
    expect(objectBody).toBe(`action=Customer_create&message[id]=1&message[deep]${'[a]'.repeat(100_000)}=bottom`);
    const arrayBody = encodeFormBody('Customer_create', { deep: arrays });
    expect(arrayBody).toBe(`action=Customer_create&message[deep]${'[0]'.repeat(100_000)}[]=bottom`);
  });

  it('keeps document order with siblings at every level', () => {
    const message = { a: [{ b: 1, c: [1, 2] }, { d: null }], e: { f: { g: true } }, h: 'x' };
    expect(encodeFormBody('Customer_create', message)).toBe(
      'action=Customer_create&message[a][0][b]=1&message[a][0][c][]=1&message[a][0][c][]=2&message[a][1][d]=&message[e][f][g]=true&message[h]=x',
    );
  });
});
