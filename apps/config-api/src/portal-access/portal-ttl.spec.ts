import { MAX_LINK_TTL_MS, parseLinkTtl } from './portal-ttl';

describe('parseLinkTtl', () => {
  it('defaults to 15 minutes and reads durations up to 24 hours', () => {
    expect(parseLinkTtl(undefined)).toBe(15 * 60_000);
    expect(parseLinkTtl('90s')).toBe(90_000);
    expect(parseLinkTtl('24h')).toBe(MAX_LINK_TTL_MS);
  });

  it.each([['25h'], ['1441m'], ['0s'], ['500ms'], ['1d'], ['15'], [''], [15], [null], [['15m']]])('refuses %j', (ttl) => {
    expect(parseLinkTtl(ttl)).toBeNull();
  });
});
