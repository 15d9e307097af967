import fc from 'fast-check';
import {
  FILTER_MAX_CONDITIONS,
  FILTER_MAX_GROUP_DEPTH,
  FILTER_MAX_LIST_VALUES,
  FILTER_MAX_LITERAL_DEPTH,
  FILTER_MAX_WORK_PER_EVENT,
  matchesDestinationFilter,
  validateDestinationFilter,
} from './destination-filter';

const message = { id: 7, name: 'Ann', tags: ['vip', 'eu'], organization: { id: 12, name: 'Acme' }, score: 4.5, deleted: false };

describe('validateDestinationFilter', () => {
  it.each([
    [null],
    [{}],
    [{ id: 7 }],
    [{ 'organization.id': { $in: [12, 13] } }],
    [{ score: { $gte: 4, $lt: 5 } }],
    [{ $or: [{ name: 'Ann' }, { 'organization.name': { $ne: 'Acme' } }] }],
    [{ $and: [{ deleted: false }, { email: { $exists: false } }] }],
    [{ tags: 'vip' }],
    [{ organization: { id: 12, name: 'Acme' } }],
    [{ organization: { $eq: { id: 12, name: 'Acme' } } }],
  ])('accepts %j', (filter) => {
    expect(validateDestinationFilter(filter)).toBeNull();
  });

  it.each([
    [{ $where: 'this.id == 7' }, 'filter: operator $where is not allowed'],
    [{ name: { $regex: '^A' } }, 'filter: operator $regex is not allowed'],
    [{ tags: { $elemMatch: { $eq: 'vip' } } }, 'filter: operator $elemMatch is not allowed'],
    [{ $nor: [{ id: 7 }] }, 'filter: operator $nor is not allowed'],
    [{ id: { $not: { $eq: 7 } } }, 'filter: operator $not is not allowed'],
    [{ 'a.$where': 1 }, 'filter: operator $where is not allowed'],
    [{ a: { b: { $where: 'x' } } }, 'filter: operator $where is not allowed'],
    [{ a: { $eq: { $where: 'x' } } }, 'filter: operator $where is not allowed'],
    [{ a: { $in: [{ $regex: 'x' }] } }, 'filter: operator $regex is not allowed'],
    [{ id: { $in: 7 } }, 'filter: $in of "id" must be an array of values'],
    [{ id: { $nin: 'x' } }, 'filter: $nin of "id" must be an array of values'],
    [{ id: { $exists: 1 } }, 'filter: $exists of "id" must be true or false'],
    [{ id: { $gt: [1] } }, 'filter: $gt of "id" must be a number or a string'],
    [{ $or: [] }, 'filter: $or must be a non-empty array of filters'],
    [{ $and: {} }, 'filter: $and must be a non-empty array of filters'],
    [{ $or: [7] }, 'filter: each member of $or must be an object'],
    [{ id: { $gt: 1, name: 2 } }, 'filter: "id" mixes operators and fields; use {"$eq": {…}} to compare to an object'],
    [{ 'a..b': 1 }, 'filter: the path "a..b" has an empty segment'],
    [{ '': 1 }, 'filter: a field path must not be empty'],
    [{ '__proto__.x': 1 }, 'filter: the path "__proto__.x" is not allowed'],
    [[{ id: 7 }], 'filter: must be an object (a query on the message) or null'],
    ['id == 7', 'filter: must be an object (a query on the message) or null'],
  ])('refuses %j naming the operator or path', (filter, problem) => {
    expect(validateDestinationFilter(filter)).toBe(problem);
  });

  it('takes 4 levels of $and/$or and refuses a 5th, naming it', () => {
    let nested: Record<string, unknown> = { id: 7 };
    for (let level = 1; level <= FILTER_MAX_GROUP_DEPTH; level += 1) nested = { [level % 2 ? '$and' : '$or']: [nested, { name: 'Ann' }] };
    expect(validateDestinationFilter(nested)).toBeNull();
    expect(validateDestinationFilter({ $or: [nested] })).toBe('filter: $and nested more than 4 levels of $and/$or');
  });

  it('takes 50 conditions and refuses the 51st, wherever it sits', () => {
    const conditions = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, { $gte: i }]));
    expect(validateDestinationFilter(conditions(FILTER_MAX_CONDITIONS))).toBeNull();
    expect(validateDestinationFilter(conditions(FILTER_MAX_CONDITIONS + 1))).toBe('filter: more than 50 conditions');
    const spread = { $and: [conditions(25), { $or: [conditions(25), { last: 1 }] }] };
    expect(validateDestinationFilter(spread)).toBe('filter: more than 50 conditions');
  });

  it('takes $in/$nin lists of 100 values and refuses 101, naming the operator and path', () => {
    const values = (count: number) => Array.from({ length: count }, (_, i) => i);
    expect(validateDestinationFilter({ id: { $in: values(FILTER_MAX_LIST_VALUES) } })).toBeNull();
    expect(validateDestinationFilter({ id: { $in: values(FILTER_MAX_LIST_VALUES + 1) } })).toBe('filter: $in of "id" has more than 100 values');
    expect(validateDestinationFilter({ 'a.b': { $nin: values(FILTER_MAX_LIST_VALUES + 1) } })).toBe('filter: $nin of "a.b" has more than 100 values');
  });

  it('bounds literal nesting and size', () => {
    let deep: unknown = 1;
    for (let level = 0; level <= FILTER_MAX_LITERAL_DEPTH; level += 1) deep = [deep];
    expect(validateDestinationFilter({ id: deep })).toBe('filter: the value of "id" is nested deeper than 8 levels');
    expect(validateDestinationFilter({ name: 'x'.repeat(9000) })).toBe('filter: larger than 8192 bytes');
  });
});

describe('matchesDestinationFilter', () => {
  it.each([
    [null, true],
    [{}, true],
    [{ id: 7 }, true],
    [{ id: 8 }, false],
    [{ 'organization.id': { $in: [12, 13] } }, true],
    [{ 'organization.id': { $nin: [12] } }, false],
    [{ score: { $gte: 4, $lt: 5 } }, true],
    [{ score: { $gt: 4.5 } }, false],
    [{ tags: 'vip' }, true],
    [{ email: { $exists: false } }, true],
    [{ $or: [{ name: 'Bob' }, { 'organization.name': 'Acme' }] }, true],
    [{ $and: [{ name: 'Ann' }, { deleted: true }] }, false],
  ])('%j on the sample message: %s', (filter, expected) => {
    expect(matchesDestinationFilter(filter, message)).toBe(expected);
  });

  it('stops a filter past its work budget on a message with long arrays, and takes nothing', () => {
    // 50 conditions of 20 values on a path through a long array: millions of comparisons unbounded.
    const paths = Array.from({ length: FILTER_MAX_CONDITIONS }, (_, i) => [`items.v${i}`, { $nin: Array.from({ length: 20 }, (_, j) => -j - 1) }]);
    const filter = Object.fromEntries(paths) as Record<string, unknown>;
    expect(validateDestinationFilter(filter)).toBeNull();
    const small = { items: [{ v0: 1 }] };
    expect(matchesDestinationFilter(filter, small)).toBe(true);
    const long = { items: Array.from({ length: 5000 }, (_, i) => Object.fromEntries(paths.map((_p, k) => [`v${k}`, i]))) };
    const started = process.hrtime.bigint();
    expect(matchesDestinationFilter(filter, long)).toBe(false);
    const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
    // Unbounded, this is 50 × 5,000 × 20 = 5 million comparisons (seconds); the budget stops it early.
    expect(tookMs).toBeLessThan(200);
    expect(FILTER_MAX_WORK_PER_EVENT).toBeLessThan(50 * 5000 * 20);
    // The next event starts with a full budget again.
    expect(matchesDestinationFilter(filter, small)).toBe(true);
  });

  it('takes nothing rather than running an operator the check refuses', () => {
    expect(matchesDestinationFilter({ $where: 'true' }, message)).toBe(false);
    expect(matchesDestinationFilter({ name: { $regex: 'A' } }, message)).toBe(false);
  });
});

/* Generators of the allowed grammar: paths, JSON values, operator objects and $and/$or groups. */
const segment = fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/).filter((key) => !['prototype', 'constructor'].includes(key));
const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const literal = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(segment, scalar, { maxKeys: 3 }));
const operatorObject = fc.oneof(
  fc.record({ $eq: literal }),
  fc.record({ $ne: literal }),
  fc.record({ $gt: fc.oneof(fc.integer(), fc.string({ maxLength: 4 })) }, { requiredKeys: [] }),
  fc.record({ $gte: fc.integer(), $lte: fc.integer() }, { requiredKeys: [] }),
  fc.record({ $lt: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
  fc.record({ $in: fc.array(literal, { maxLength: 4 }) }),
  fc.record({ $nin: fc.array(scalar, { maxLength: 4 }) }),
  fc.record({ $exists: fc.boolean() }),
);
const { query } = fc.letrec((tie) => ({
  query: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.dictionary(path, fc.oneof(literal, operatorObject), { maxKeys: 3 }),
    fc.record({ $and: fc.array(tie('query'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ $or: fc.array(tie('query'), { minLength: 1, maxLength: 3 }) }),
  ),
}));
const anyMessage = fc.oneof(fc.jsonValue(), fc.object(), fc.constant(message));

describe('filter properties', () => {
  it('any accepted filter matches any message without throwing', () => {
    fc.assert(
      fc.property(query, anyMessage, (filter, candidate) => {
        fc.pre(validateDestinationFilter(filter) === null);
        expect(typeof matchesDestinationFilter(filter as Record<string, unknown>, candidate)).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('any operator outside the allowed set is refused by name, wherever it is', () => {
    const allowed = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$and', '$or']);
    const operator = fc
      .oneof(fc.constantFrom('$where', '$regex', '$expr', '$function', '$elemMatch', '$not', '$nor', '$mod', '$size', '$all', '$type', '$options'), fc.string({ maxLength: 10 }).map((name) => `$${name}`))
      .filter((name) => !allowed.has(name));
    const placements: ((op: string) => unknown)[] = [
      (op) => ({ [op]: 1 }),
      (op) => ({ field: { [op]: 'x' } }),
      (op) => ({ $and: [{ field: 1 }, { [op]: [] }] }),
      (op) => ({ $or: [{ 'a.b': { [op]: true } }] }),
      (op) => ({ field: { $in: [{ [op]: 1 }] } }),
    ];
    fc.assert(
      fc.property(operator, fc.constantFrom(...placements), (op, place) => {
        expect(validateDestinationFilter(place(op))).toBe(`filter: operator ${op.length > 64 ? `${op.slice(0, 64)}…` : op} is not allowed`);
      }),
    );
  });
});
