import { FORCE_GENERIC_PLANS, withForcedGenericPlans } from './generic-plan-pool';

describe('withForcedGenericPlans', () => {
  it('adds the setting as the URL options parameter, which node-postgres reads over the client settings', () => {
    const url = new URL(withForcedGenericPlans('postgres://app:secret@db.internal:5432/callbacks'));
    expect(url.searchParams.get('options')).toBe(FORCE_GENERIC_PLANS);
    expect([url.username, url.password, url.host, url.pathname]).toEqual(['app', 'secret', 'db.internal:5432', '/callbacks']);
  });

  it("keeps the URL's own options and its other parameters", () => {
    const url = new URL(withForcedGenericPlans('postgres://app@db/callbacks?sslmode=require&options=-c%20search_path%3Dcallbacks'));
    expect(url.searchParams.get('options')).toBe(`-c search_path=callbacks ${FORCE_GENERIC_PLANS}`);
    expect(url.searchParams.get('sslmode')).toBe('require');
  });
});
