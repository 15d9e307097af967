import fc from 'fast-check';
import { checkDeliveryOptions, describeProblems, MAX_PER_SECOND_PROBLEM, NOTHING_SENT_PROBLEM, ORDERING_PROBLEM, UNKNOWN_OPTION_PROBLEM } from './delivery-options.validation';

describe('checkDeliveryOptions', () => {
  it('takes either option alone or both, keeping only what was sent', () => {
    expect(checkDeliveryOptions({ ordering: 'subject' })).toEqual({ changes: { ordering: 'subject' }, problems: [] });
    expect(checkDeliveryOptions({ max_per_second: 1 })).toEqual({ changes: { max_per_second: 1 }, problems: [] });
    expect(checkDeliveryOptions({ max_per_second: null })).toEqual({ changes: { max_per_second: null }, problems: [] });
    expect(checkDeliveryOptions({ ordering: 'none', max_per_second: 10_000 })).toEqual({
      changes: { ordering: 'none', max_per_second: 10_000 },
      problems: [],
    });
  });

  it.each([['SUBJECT'], ['Subject'], [''], [null], [1], [true], [['subject']], [{}]])('refuses ordering %j naming the field', (ordering) => {
    expect(checkDeliveryOptions({ ordering })).toEqual({ changes: null, nothingSent: false, problems: [{ path: 'ordering', problem: ORDERING_PROBLEM }] });
  });

  it.each([[0], [-1], [10_001], [1.5], [Number.NaN], ['5'], [true], [[5]], [{}], [1e300]])('refuses max_per_second %j naming the field', (value) => {
    expect(checkDeliveryOptions({ max_per_second: value })).toEqual({
      changes: null,
      nothingSent: false,
      problems: [{ path: 'max_per_second', problem: MAX_PER_SECOND_PROBLEM }],
    });
  });

  it('accepts every integer of the range and nothing outside it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -20_000, max: 20_000 }), fc.double()), (value) => {
        const valid = Number.isInteger(value) && value >= 1 && value <= 10_000;
        const check = checkDeliveryOptions({ max_per_second: value });
        expect(check.changes).toEqual(valid ? { max_per_second: value } : null);
      }),
    );
  });

  it('refuses unknown keys, even beside valid options, and names every problem', () => {
    const check = checkDeliveryOptions({ ordering: 'subject', max_per_sec: 5, max_per_second: 0 });
    expect(check.changes).toBeNull();
    expect(check.problems).toEqual([
      { path: 'max_per_sec', problem: UNKNOWN_OPTION_PROBLEM },
      { path: 'max_per_second', problem: MAX_PER_SECOND_PROBLEM },
    ]);
    expect(describeProblems(check.problems)).toBe(`max_per_sec ${UNKNOWN_OPTION_PROBLEM}; max_per_second ${MAX_PER_SECOND_PROBLEM}`);
  });

  it('cuts an absurd key in the message', () => {
    const [problem] = checkDeliveryOptions({ ['k'.repeat(10_000)]: 1 }).problems;
    expect(problem.path).toBe(`${'k'.repeat(64)}…`);
  });

  it.each([[{}], [null], [undefined], [[]], [['ordering']], ['subject'], [7]])('says nothing was sent for %j, naming both options', (body) => {
    expect(checkDeliveryOptions(body)).toEqual({
      changes: null,
      nothingSent: true,
      problems: [
        { path: 'ordering', problem: NOTHING_SENT_PROBLEM },
        { path: 'max_per_second', problem: NOTHING_SENT_PROBLEM },
      ],
    });
  });
});
