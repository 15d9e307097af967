import { OriginLimiter } from './origin-limiter';

describe('OriginLimiter', () => {
  it('admits up to the cap per origin, independently of other origins', () => {
    const limiter = new OriginLimiter(2);
    expect(limiter.tryAcquire('http://a')).toBe(true);
    expect(limiter.tryAcquire('http://a')).toBe(true);
    expect(limiter.tryAcquire('http://a')).toBe(false);
    expect(limiter.tryAcquire('http://b')).toBe(true);
    limiter.release('http://a');
    expect(limiter.count('http://a')).toBe(1);
    expect(limiter.tryAcquire('http://a')).toBe(true);
    limiter.release('http://a');
    limiter.release('http://a');
    expect(limiter.count('http://a')).toBe(0);
  });
});
