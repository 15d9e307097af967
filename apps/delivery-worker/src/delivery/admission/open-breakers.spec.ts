import { OpenBreakers } from './open-breakers';

const NOW = 1_000_000;
const KEY = 'http://down.example|1|aaaa';

describe('OpenBreakers', () => {
  it('answers from memory for at most the trust window', () => {
    const breakers = new OpenBreakers(1_000);
    breakers.remember(KEY, { retryAt: new Date(NOW + 30_000), consecutiveFailures: 5, lastError: 'timeout' }, NOW);
    expect(breakers.lookup(KEY, NOW + 999)).toEqual({ retryAt: new Date(NOW + 30_000), consecutiveFailures: 5, lastError: 'timeout' });
    expect(breakers.lookup(KEY, NOW + 1_000)).toBeNull();
    expect(breakers.lookup('http://other.example|1|aaaa', NOW)).toBeNull();
  });

  it('never past the time the breaker lets a probe through', () => {
    const breakers = new OpenBreakers(1_000);
    breakers.remember(KEY, { retryAt: new Date(NOW + 300), consecutiveFailures: 5, lastError: null }, NOW);
    expect(breakers.lookup(KEY, NOW + 299)).not.toBeNull();
    expect(breakers.lookup(KEY, NOW + 300)).toBeNull();
    // An answer whose retry time has already passed is not remembered at all.
    breakers.remember(KEY, { retryAt: new Date(NOW - 1), consecutiveFailures: 5, lastError: null }, NOW);
    expect(breakers.lookup(KEY, NOW)).toBeNull();
  });

  it('forgets a breaker this process closed', () => {
    const breakers = new OpenBreakers(1_000);
    breakers.remember(KEY, { retryAt: new Date(NOW + 30_000), consecutiveFailures: 5, lastError: null }, NOW);
    breakers.forget(KEY);
    expect(breakers.lookup(KEY, NOW)).toBeNull();
  });
});
