import { LOAD_STEPS, requestedSteps } from './load-steps.scenario';

describe('requestedSteps', () => {
  it('runs every step when BENCH_LOAD_STEPS is unset', () => {
    expect(requestedSteps(undefined)).toEqual(LOAD_STEPS);
  });

  it('keeps only the asked steps, in the steps\' order', () => {
    expect(requestedSteps('1000,500')).toEqual([500, 1_000]);
  });

  it('refuses a rate that is not a step, naming the setting', () => {
    expect(() => requestedSteps('300')).toThrow('BENCH_LOAD_STEPS=300: expected some of 200,500,1000,2000');
  });
});
