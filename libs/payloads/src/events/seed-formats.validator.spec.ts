import {
  changesMapProblems,
  chatContentProblems,
  customFieldMapProblems,
  isDurationSeconds,
  isScalarOrNull,
  isSeedTimestamp,
  isSeedZonedTimestamp,
  stringMapProblems,
} from './seed-formats.validator';

describe('seed formats', () => {
  it.each(['2024-03-15 09:30:12', '2024-02-29 23:59:59', '2000-01-01 00:00:00', '2023-12-31 00:00:00', '0004-02-29 00:00:00'])('accepts timestamp %s', (value) => {
    expect(isSeedTimestamp(value)).toBe(true);
  });

  it.each([
    ['ISO form', '2024-03-15T09:30:12'],
    ['missing seconds', '2024-03-15 09:30'],
    ['trailing zone', '2024-03-15 09:30:12 +0800'],
    ['one-digit month', '2024-3-15 09:30:12'],
    ['not a leap year', '2023-02-29 10:00:00'],
    ['day 31 in April', '2024-04-31 10:00:00'],
    ['month 13', '2024-13-01 10:00:00'],
    ['month 0', '2024-00-10 10:00:00'],
    ['day 0', '2024-01-00 10:00:00'],
    ['hour 24', '2024-01-01 24:00:00'],
    ['minute 60', '2024-01-01 10:60:00'],
    ['second 60', '2024-01-01 10:00:60'],
    ['1900 was not a leap year', '1900-02-29 10:00:00'],
    ['a number', 1710466212],
  ])('rejects timestamp: %s', (_label, value) => {
    expect(isSeedTimestamp(value)).toBe(false);
  });

  it.each<[string, (value: unknown) => boolean, unknown[], unknown[]]>([
    [
      'zoned timestamps need a real date and a +ZZZZ / -ZZZZ offset',
      isSeedZonedTimestamp,
      ['2024-03-15 09:29:37 +0800', '2024-03-15 09:29:37 -0530'],
      ['2024-03-15 09:29:37', '2024-03-15 09:29:37 +08:00', '2024-03-15 09:29:37 0800', '2024-03-15 09:29:37 +1560', '2024-02-30 09:29:37 +0800'],
    ],
    ['durations are <n>s', isDurationSeconds, ['90s', '0s'], ['90', '1.5s', '-3s', '90 s', 90]],
    ['scalars or null', isScalarOrNull, [null, 'x', 0, 1.5, true], [undefined, {}, [], Number.NaN]],
  ])('%s', (_rule, accepts, accepted, refused) => {
    for (const value of accepted) expect(accepts(value)).toBe(true);
    for (const value of refused) expect(accepts(value)).toBe(false);
  });

  it('custom field maps name each bad key', () => {
    expect(customFieldMapProblems({ SelectField_1: ['a'], TextField_22: 'b' })).toEqual([]);
    expect(customFieldMapProblems({})).toEqual([]);
    expect(customFieldMapProblems([])).toEqual([{ problem: 'must be an object' }]);
    expect(
      customFieldMapProblems({
        Foo: 'x',
        SelectField_: ['a'],
        selectfield_1: ['a'],
        SelectField_2: 'a',
        SelectField_3: ['a', 1],
        TextField_4: ['a'],
        TextField_5: null,
      }),
    ).toEqual([
      { key: 'Foo', problem: 'must be a custom field name SelectField_<n> or TextField_<n>' },
      { key: 'SelectField_', problem: 'must be a custom field name SelectField_<n> or TextField_<n>' },
      { key: 'selectfield_1', problem: 'must be a custom field name SelectField_<n> or TextField_<n>' },
      { key: 'SelectField_2', problem: 'must be an array of strings' },
      { key: 'SelectField_3', problem: 'must be an array of strings' },
      { key: 'TextField_4', problem: 'must be a string' },
      { key: 'TextField_5', problem: 'must be a string' },
    ]);
  });

  it('changes maps need two-element arrays', () => {
    expect(changesMapProblems({ level: ['a', 'b'], x: [null, { y: 1 }] })).toEqual([]);
    expect(changesMapProblems('level')).toEqual([{ problem: 'must be an object mapping each changed field to [original value, new value]' }]);
    expect(changesMapProblems({ a: ['only'], b: [1, 2, 3], c: 'x', d: { 0: 1, 1: 2 } }).map((p) => p.key)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('string maps need string values', () => {
    expect(stringMapProblems({ any_name: 'x' })).toEqual([]);
    expect(stringMapProblems({ a: 1 })).toEqual([{ key: 'a', problem: 'must be a string' }]);
    expect(stringMapProblems(null)).toEqual([{ problem: 'must be an object' }]);
  });

  describe('chat log content', () => {
    const content = (value: unknown) => chatContentProblems(JSON.stringify(value));

    it('accepts the documented shapes', () => {
      expect(content({ type: 'message', platform: 'web', data: { content: 'hi', duration: null } })).toEqual([]);
      expect(content({ type: 'image', platform: 'web', data: { content: 'a.png', duration: 1.5, origin_url: 'https://x/a.png' } })).toEqual([]);
      expect(content({ type: 'close' })).toEqual([]);
      expect(content({ type: 'rich', extra: { anything: true } })).toEqual([]);
    });

    it('rejects a non-string, invalid JSON and JSON that is not an object', () => {
      expect(chatContentProblems({ type: 'message' })).toEqual(['must be a string holding a JSON object']);
      expect(chatContentProblems('{type: message}')).toEqual(['must be a string holding a JSON object (it is not valid JSON)']);
      expect(chatContentProblems('[{"type":"message"}]')).toEqual(['must be a string holding a JSON object (it holds JSON that is not an object)']);
      expect(chatContentProblems('"text"')).toEqual(['must be a string holding a JSON object (it holds JSON that is not an object)']);
      expect(chatContentProblems('null')).toEqual(['must be a string holding a JSON object (it holds JSON that is not an object)']);
    });

    it('names each wrong inner field', () => {
      expect(content({ platform: 1, data: { content: 2, duration: '3', origin_url: 4 } })).toEqual([
        'its JSON field type must be a string',
        'its JSON field platform must be a string',
        'its JSON field data.content must be a string',
        'its JSON field data.duration must be a number or null',
        'its JSON field data.origin_url must be a string',
      ]);
      expect(content({ type: 'message', data: 'hi' })).toEqual(['its JSON field data must be an object']);
    });
  });
});
